#pragma once
/// Fail-closed socket binding for the cellular HTTP engine: device bind, verification, source bind.

/// Outcome of `cshims_bind_socket`; anything but CSHIMS_BIND_OK means the socket must not be used.
typedef enum {
    CSHIMS_BIND_OK = 0,
    /// setsockopt(SO_BINDTODEVICE) failed (errno in *err: EPERM, ENODEV, …).
    CSHIMS_BIND_DEVICE_FAILED = 1,
    /// getsockopt(SO_BINDTODEVICE) did not report the requested device.
    CSHIMS_BIND_VERIFY_FAILED = 2,
    /// The path has no address of the socket's family.
    CSHIMS_BIND_NO_ADDRESS = 3,
    /// bind() to the bearer address failed (errno in *err: EADDRNOTAVAIL when it is gone).
    CSHIMS_BIND_ADDRESS_FAILED = 4,
    /// The socket is neither AF_INET nor AF_INET6, or its family cannot be read.
    CSHIMS_BIND_FAMILY_UNKNOWN = 5,
} cshims_bind_result;

/// Binds `fd` to device `ifname`, verifies the binding with getsockopt, then binds it to the
/// bearer's own address of the socket's family (`ipv4` or `ipv6`, numeric, NULL when absent).
/// Thread-safe; stores the failing call's errno in `*err` (0 on success).
cshims_bind_result cshims_bind_socket(int fd, const char *ifname, const char *ipv4,
                                      const char *ipv6, int *err);
