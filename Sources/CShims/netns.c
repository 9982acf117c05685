#define _GNU_SOURCE
#include "cshims_netns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

enum job_kind { JOB_TUN, JOB_SOCKET };

struct netns_job {
    enum job_kind kind;
    const char *netns_path;
    const char *ifname;
    int domain, type, protocol;
    int result;
    int errnum;  /* the errno of the failure, for the caller's thread */
    char *error;
    size_t error_size;
};

static void fail(struct netns_job *job, const char *what, int err) {
    snprintf(job->error, job->error_size, "%s: %s", what, strerror(err));
    job->errnum = err;
    job->result = -1;
}

static void *netns_thread(void *arg) {
    struct netns_job *job = arg;
    int ns = open(job->netns_path, O_RDONLY | O_CLOEXEC);
    if (ns < 0) { fail(job, job->netns_path, errno); return NULL; }
    if (setns(ns, CLONE_NEWNET) != 0) { int e = errno; close(ns); fail(job, "setns", e); return NULL; }
    close(ns);
    if (job->kind == JOB_SOCKET) {
        int fd = socket(job->domain, job->type | SOCK_CLOEXEC, job->protocol);
        if (fd < 0) { fail(job, "socket", errno); return NULL; }
        job->result = fd;
        return NULL;
    }
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) { fail(job, "/dev/net/tun", errno); return NULL; }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    strncpy(ifr.ifr_name, job->ifname, IFNAMSIZ - 1);
    if (ioctl(fd, TUNSETIFF, &ifr) != 0) { int e = errno; close(fd); fail(job, "TUNSETIFF", e); return NULL; }
    job->result = fd;
    return NULL;
}

static int run_job(struct netns_job *job) {
    pthread_t thread;
    job->result = -1;
    if (job->error_size > 0) job->error[0] = 0;
    int rc = pthread_create(&thread, NULL, netns_thread, job);
    if (rc != 0) { fail(job, "pthread_create", rc); }
    else { pthread_join(thread, NULL); }
    if (job->result < 0) { errno = job->errnum; }
    return job->result;
}

int cshims_tun_open_in_netns(const char *netns_path, const char *ifname, char *error, size_t error_size) {
    if (strlen(ifname) >= IFNAMSIZ) {
        snprintf(error, error_size, "interface name too long: %s", ifname);
        return -1;
    }
    struct netns_job job = { .kind = JOB_TUN, .netns_path = netns_path, .ifname = ifname,
                             .error = error, .error_size = error_size };
    return run_job(&job);
}

int cshims_socket_in_netns(const char *netns_path, int domain, int type, int protocol,
                           char *error, size_t error_size) {
    struct netns_job job = { .kind = JOB_SOCKET, .netns_path = netns_path, .domain = domain,
                             .type = type, .protocol = protocol, .error = error, .error_size = error_size };
    return run_job(&job);
}

int cshims_netns_listen_socket(const char *netns_path, const char *address, uint16_t port) {
    struct sockaddr_storage storage;
    memset(&storage, 0, sizeof storage);
    socklen_t length;
    struct sockaddr_in *v4 = (struct sockaddr_in *) &storage;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) &storage;
    if (inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        length = sizeof *v4;
    } else if (inet_pton(AF_INET6, address, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        length = sizeof *v6;
    } else {
        errno = EINVAL;
        return -1;
    }
    char error[128];
    int fd = cshims_socket_in_netns(netns_path, storage.ss_family, SOCK_STREAM, 0, error, sizeof error);
    if (fd < 0) return -1;
    /* The socket belongs to the namespace it was created in: bind and listen need no switch. */
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(fd, (struct sockaddr *) &storage, length) != 0 || listen(fd, 64) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}
