#include "cshims_bind.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

cshims_bind_result cshims_bind_socket(int fd, const char *ifname, const char *ipv4,
                                      const char *ipv6, int *err) {
    *err = 0;
    int family = 0;
    socklen_t flen = sizeof(family);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &family, &flen) != 0) {
        *err = errno;
        return CSHIMS_BIND_FAMILY_UNKNOWN;
    }
    if (family != AF_INET && family != AF_INET6) return CSHIMS_BIND_FAMILY_UNKNOWN;

    size_t namelen = strlen(ifname);
    if (namelen == 0 || namelen >= IFNAMSIZ) {
        *err = ENODEV;
        return CSHIMS_BIND_DEVICE_FAILED;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)(namelen + 1)) != 0) {
        *err = errno;
        return CSHIMS_BIND_DEVICE_FAILED;
    }
    char bound[IFNAMSIZ + 1];
    memset(bound, 0, sizeof(bound));
    socklen_t blen = IFNAMSIZ;
    if (getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, bound, &blen) != 0) {
        *err = errno;
        return CSHIMS_BIND_VERIFY_FAILED;
    }
    if (strncmp(bound, ifname, IFNAMSIZ) != 0) return CSHIMS_BIND_VERIFY_FAILED;

    if (family == AF_INET) {
        if (ipv4 == NULL) return CSHIMS_BIND_NO_ADDRESS;
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof(sa));
        sa.sin_family = AF_INET;
        if (inet_pton(AF_INET, ipv4, &sa.sin_addr) != 1) return CSHIMS_BIND_NO_ADDRESS;
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
            *err = errno;
            return CSHIMS_BIND_ADDRESS_FAILED;
        }
    } else {
        if (ipv6 == NULL) return CSHIMS_BIND_NO_ADDRESS;
        struct sockaddr_in6 sa6;
        memset(&sa6, 0, sizeof(sa6));
        sa6.sin6_family = AF_INET6;
        if (inet_pton(AF_INET6, ipv6, &sa6.sin6_addr) != 1) return CSHIMS_BIND_NO_ADDRESS;
        if (IN6_IS_ADDR_LINKLOCAL(&sa6.sin6_addr)) sa6.sin6_scope_id = if_nametoindex(ifname);
        if (bind(fd, (struct sockaddr *)&sa6, sizeof(sa6)) != 0) {
            *err = errno;
            return CSHIMS_BIND_ADDRESS_FAILED;
        }
    }
    return CSHIMS_BIND_OK;
}
