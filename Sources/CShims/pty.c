#define _GNU_SOURCE
#include "cshims_pty.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static void make_raw(int fd) {
    struct termios t;
    if (tcgetattr(fd, &t) == 0) {
        cfmakeraw(&t);
        (void)tcsetattr(fd, TCSANOW, &t);
    }
}

int cshims_pty_open(int *master, int *slave, char *name, size_t name_size) {
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0) return errno;
    if (grantpt(m) != 0 || unlockpt(m) != 0 || ptsname_r(m, name, name_size) != 0) {
        int e = errno;
        close(m);
        return e;
    }
    int s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (s < 0) {
        int e = errno;
        close(m);
        return e;
    }
    make_raw(m);
    make_raw(s);
    int flags = fcntl(m, F_GETFL);
    if (flags < 0 || fcntl(m, F_SETFL, flags | O_NONBLOCK) != 0) {
        int e = errno;
        close(s);
        close(m);
        return e;
    }
    *master = m;
    *slave = s;
    return 0;
}

int cshims_pty_unread(int slave) {
    int count = 0;
    return ioctl(slave, FIONREAD, &count) == 0 ? count : -1;
}
