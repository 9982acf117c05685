#define _GNU_SOURCE
#include "cshims_netns_socket.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct listen_job {
    const char *netns_path;
    const char *address;
    uint16_t port;
    int fd;
    int error;
};

static void *listen_in_namespace(void *arg)
{
    struct listen_job *job = arg;
    int ns = open(job->netns_path, O_RDONLY | O_CLOEXEC);
    if (ns < 0) { job->error = errno; return NULL; }
    if (setns(ns, CLONE_NEWNET) != 0) { job->error = errno; close(ns); return NULL; }
    close(ns);

    struct sockaddr_storage storage;
    memset(&storage, 0, sizeof storage);
    socklen_t length;
    int family;
    struct sockaddr_in *v4 = (struct sockaddr_in *) &storage;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) &storage;
    if (inet_pton(AF_INET, job->address, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(job->port);
        length = sizeof *v4;
        family = AF_INET;
    } else if (inet_pton(AF_INET6, job->address, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(job->port);
        length = sizeof *v6;
        family = AF_INET6;
    } else {
        job->error = EINVAL;
        return NULL;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) { job->error = errno; return NULL; }
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(fd, (struct sockaddr *) &storage, length) != 0 || listen(fd, 64) != 0) {
        job->error = errno;
        close(fd);
        return NULL;
    }
    job->fd = fd;
    return NULL;
}

int cshims_netns_listen_socket(const char *netns_path, const char *address, uint16_t port)
{
    struct listen_job job = { netns_path, address, port, -1, 0 };
    pthread_t thread;
    int rc = pthread_create(&thread, NULL, listen_in_namespace, &job);
    if (rc != 0) { errno = rc; return -1; }
    pthread_join(thread, NULL);
    if (job.fd < 0) { errno = job.error; return -1; }
    return job.fd;
}
