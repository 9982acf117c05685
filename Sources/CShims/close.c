#include "cshims_close.h"

#include <errno.h>
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

void cshims_close_draining(const int *fds, int count, int timeout_ms) {
    if (count <= 0) return;
    struct pollfd *waiting = calloc((size_t)count, sizeof *waiting);
    int open = 0;
    for (int i = 0; i < count; i++) {
        int type = 0;
        socklen_t len = sizeof(type);
        // Only connected streams have a peer that may still send; anything else closes at once.
        if (waiting && getsockopt(fds[i], SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM
            && shutdown(fds[i], SHUT_WR) == 0) {
            waiting[open++] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
        } else {
            close(fds[i]);
        }
    }
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    char buffer[4096];
    int left_open = open;
    while (left_open > 0) {
        long left = timeout_ms - elapsed_ms(&start);
        if (left <= 0) break;
        int ready = poll(waiting, (nfds_t)open, (int)left);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) break;
        for (int i = 0; i < open; i++) {
            if (waiting[i].fd < 0 || waiting[i].revents == 0) continue;
            ssize_t n = recv(waiting[i].fd, buffer, sizeof buffer, MSG_DONTWAIT);
            if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
            if (n <= 0) {  // the peer closed too (or the connection is gone)
                close(waiting[i].fd);
                waiting[i].fd = -1;
                left_open--;
            }
        }
    }
    for (int i = 0; i < open; i++) {
        if (waiting[i].fd >= 0) close(waiting[i].fd);
    }
    free(waiting);
}
