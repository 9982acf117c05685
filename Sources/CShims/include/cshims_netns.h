#ifndef CSHIMS_NETNS_H
#define CSHIMS_NETNS_H

/// Network-namespace helpers: each one switches namespace on a private pthread (setns, then the
/// operation, then the thread ends), so no Swift thread ever changes namespace.
/// On failure they return -1 and leave a message in `error` (NUL-terminated, `error_size` bytes).

#include <stddef.h>
#include <stdint.h>

/// Attaches to (or creates) the TUN device `ifname` (IFF_TUN | IFF_NO_PI) inside the network
/// namespace at `netns_path` (e.g. /run/netns/cp-ue). Returns the non-blocking, close-on-exec
/// file descriptor of the queue.
int cshims_tun_open_in_netns(const char *netns_path, const char *ifname, char *error, size_t error_size);

/// Creates a socket(domain, type | SOCK_CLOEXEC, protocol) inside the network namespace at
/// `netns_path`. The socket stays in that namespace for its whole life.
int cshims_socket_in_netns(const char *netns_path, int domain, int type, int protocol,
                           char *error, size_t error_size);

/// Creates a TCP socket inside the network namespace at `netns_path`, binds it to numeric
/// `address`:`port` and listens. Returns the fd, or -1 with errno set.
int cshims_netns_listen_socket(const char *netns_path, const char *address, uint16_t port);

#endif
