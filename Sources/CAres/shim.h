#pragma once
#include <ares.h>
#include <poll.h>
#include <string.h>

/// Creates a channel that asks DNS only (no hosts file, no search domains) with the given
/// per-try timeout and number of tries; the caller then sets servers and the configure callback.
static inline int cp_ares_init(ares_channel *channel, int timeout_ms, int tries) {
    struct ares_options o;
    memset(&o, 0, sizeof(o));
    o.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
    o.timeout = timeout_ms;
    o.tries = tries;
    o.lookups = (char *)"b";
    o.ndomains = 0;
    o.domains = NULL;
    int mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_LOOKUPS | ARES_OPT_DOMAINS;
    return ares_init_options(channel, &o, mask);
}

/// Waits up to `max_ms` (less when c-ares wants to retry sooner, or one of the `wake_count`
/// descriptors `wake_fds` becomes readable; negative ones are skipped) for the channel's sockets
/// and processes them; returns the number of sockets the channel has open (0 = nothing pending).
static inline int cp_ares_step(ares_channel channel, int max_ms, const int *wake_fds, int wake_count) {
    ares_socket_t socks[ARES_GETSOCK_MAXNUM];
    int bits = ares_getsock(channel, socks, ARES_GETSOCK_MAXNUM);
    struct pollfd fds[ARES_GETSOCK_MAXNUM + 4];
    int n = 0;
    for (int i = 0; i < ARES_GETSOCK_MAXNUM; i++) {
        short ev = 0;
        if (ARES_GETSOCK_READABLE(bits, i)) ev |= POLLIN;
        if (ARES_GETSOCK_WRITABLE(bits, i)) ev |= POLLOUT;
        if (!ev) continue;
        fds[n].fd = socks[i];
        fds[n].events = ev;
        fds[n].revents = 0;
        n++;
    }
    int sockets = n;
    for (int i = 0; i < wake_count && i < 4; i++) {
        if (wake_fds[i] >= 0) fds[n++] = (struct pollfd){ .fd = wake_fds[i], .events = POLLIN, .revents = 0 };
    }
    struct timeval max = { max_ms / 1000, (max_ms % 1000) * 1000 }, tv;
    struct timeval *t = ares_timeout(channel, &max, &tv);
    int wait_ms = (int)(t->tv_sec * 1000 + t->tv_usec / 1000);
    int r = poll(fds, (nfds_t)n, wait_ms);
    n = sockets;
    if (r <= 0) {
        ares_process_fd(channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    } else {
        for (int i = 0; i < n; i++) {
            ares_socket_t rfd = (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) ? fds[i].fd : ARES_SOCKET_BAD;
            ares_socket_t wfd = (fds[i].revents & POLLOUT) ? fds[i].fd : ARES_SOCKET_BAD;
            ares_process_fd(channel, rfd, wfd);
        }
    }
    return n;
}
