#pragma once
#include <stdint.h>

/// Creates a TCP socket inside the network namespace at `netns_path` (e.g.
/// /run/netns/NAME), binds it to numeric `address`:`port` and listens. The namespace switch
/// happens on a private thread, so the caller's thread never changes namespace; the socket
/// stays in the namespace it was created in. Returns the fd, or -1 with errno set.
int cshims_netns_listen_socket(const char *netns_path, const char *address, uint16_t port);
