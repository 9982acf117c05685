#include "cshims_close.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long elapsed_ms(const struct timespec *start) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000L + (now.tv_nsec - start->tv_nsec) / 1000000L;
}

/// What a socket still waits for before it may close.
enum waiting_for { CONNECT, PEER_CLOSE, DATAGRAMS };

struct closing {
    enum waiting_for what;
    int awaited;  // DATAGRAMS: answers still due
};

/// The TCP state of a stream socket, or -1.
static int tcp_state(int fd) {
    struct tcp_info info;
    socklen_t len = sizeof(info);
    return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 ? info.tcpi_state : -1;
}

/// Sends FIN; false when the stream has nothing to wait for (not connected, already reset).
static int start_peer_close(int fd) {
    int state = tcp_state(fd);
    if (state != TCP_ESTABLISHED && state != TCP_CLOSE_WAIT) return 0;
    return shutdown(fd, SHUT_WR) == 0;
}

/// Closes a stream whose peer has not closed in time. When the peer acknowledged our FIN (it
/// is alive, just busy), the stream is reset through the socket itself (still bound): the peer
/// then sends nothing more, whereas an orphaned socket would die on the peer's first late
/// segment and leave the next ones to the kernel's unbound RST. Otherwise (our FIN not yet
/// acknowledged: the path may be broken) the orphaned socket keeps its binding and retransmits
/// its FIN until the peer answers.
static void close_unfinished(int fd) {
    if (tcp_state(fd) == TCP_FIN_WAIT2) {
        struct linger linger = { .l_onoff = 1, .l_linger = 0 };
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, sizeof(linger));
    }
    close(fd);
}

void cshims_close_draining(const int *fds, const int *awaited_datagrams, int count, int stream_timeout_ms,
                           int datagram_timeout_ms) {
    if (count <= 0) return;
    struct pollfd *waiting = calloc((size_t)count, sizeof *waiting);
    struct closing *closing = calloc((size_t)count, sizeof *closing);
    if (!waiting || !closing) {
        for (int i = 0; i < count; i++) close(fds[i]);
        free(waiting);
        free(closing);
        return;
    }
    int open = 0;
    for (int i = 0; i < count; i++) {
        int fd = fds[i], type = 0;
        socklen_t len = sizeof(type);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) type = -1;
        if (type == SOCK_STREAM && tcp_state(fd) == TCP_SYN_SENT) {
            waiting[open] = (struct pollfd){ .fd = fd, .events = POLLOUT };
            closing[open++] = (struct closing){ .what = CONNECT };
        } else if (type == SOCK_STREAM && start_peer_close(fd)) {
            waiting[open] = (struct pollfd){ .fd = fd, .events = POLLIN };
            closing[open++] = (struct closing){ .what = PEER_CLOSE };
        } else if (type == SOCK_DGRAM && awaited_datagrams && awaited_datagrams[i] > 0) {
            waiting[open] = (struct pollfd){ .fd = fd, .events = POLLIN };
            closing[open++] = (struct closing){ .what = DATAGRAMS, .awaited = awaited_datagrams[i] };
        } else {
            close(fd);
        }
    }
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    char buffer[4096];
    int left_open = open, datagrams_open = 0;
    for (int i = 0; i < open; i++) datagrams_open += closing[i].what == DATAGRAMS;
    while (left_open > 0) {
        long elapsed = elapsed_ms(&start);
        if (datagrams_open > 0 && elapsed >= datagram_timeout_ms) {
            for (int i = 0; i < open; i++) {
                if (waiting[i].fd < 0 || closing[i].what != DATAGRAMS) continue;
                close(waiting[i].fd);
                waiting[i].fd = -1;
                left_open--;
            }
            datagrams_open = 0;
            continue;
        }
        long left = stream_timeout_ms - elapsed;
        if (datagrams_open > 0 && datagram_timeout_ms - elapsed < left) left = datagram_timeout_ms - elapsed;
        if (left <= 0) break;
        int ready = poll(waiting, (nfds_t)open, (int)left);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) break;
        if (ready == 0) continue;  // a deadline passed: handled above
        for (int i = 0; i < open; i++) {
            int fd = waiting[i].fd;
            if (fd < 0 || waiting[i].revents == 0) continue;
            int done = 0;
            if (closing[i].what == CONNECT) {
                // Connected: close it like any connection. Refused or failed: nothing more comes.
                if (start_peer_close(fd)) {
                    waiting[i].events = POLLIN;
                    closing[i].what = PEER_CLOSE;
                } else {
                    done = 1;
                }
            } else {
                ssize_t n = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
                if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
                if (closing[i].what == PEER_CLOSE) {
                    done = n <= 0;  // the peer closed too (or the connection is gone)
                } else {
                    done = n < 0 || --closing[i].awaited <= 0;  // an answer (or an ICMP error) came
                }
            }
            if (done) {
                close(fd);
                waiting[i].fd = -1;
                left_open--;
                datagrams_open -= closing[i].what == DATAGRAMS;
            }
        }
    }
    for (int i = 0; i < open; i++) {
        if (waiting[i].fd < 0) continue;
        if (closing[i].what == PEER_CLOSE) close_unfinished(waiting[i].fd); else close(waiting[i].fd);
    }
    free(waiting);
    free(closing);
}
