#pragma once
#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/// Starts a daemon on an already-listening socket `listen_fd` (MHD takes ownership of it), either
/// one thread per connection (`event_threads` 0) or `event_threads` epoll threads that suspend and
/// resume connections, optionally with TLS from PEM strings (both non-NULL), calling `target`
/// with each request's target as received (its return value is the request's initial per-request
/// pointer), `handler` for each request and `completed` when a request ends (also after `target`
/// alone) and `connection_event` when a connection opens and closes (before its socket is closed;
/// NULL: not called). `per_ip_limit` bounds the connections of one client address (0: none).
/// Returns NULL on failure.
static inline struct MHD_Daemon *cp_mhd_start(int listen_fd,
                                              const char *cert_pem, const char *key_pem,
                                              void *(*target)(void *cls, const char *uri, struct MHD_Connection *connection),
                                              MHD_AccessHandlerCallback handler, void *handler_cls,
                                              MHD_RequestCompletedCallback completed, void *completed_cls,
                                              unsigned int connection_limit, unsigned int timeout_s,
                                              size_t memory_limit, unsigned int event_threads,
                                              unsigned int per_ip_limit, MHD_NotifyConnectionCallback connection_event)
{
    /* Limits are passed only when set (non-zero), so libmicrohttpd's defaults stay otherwise. */
    struct MHD_OptionItem limits[8];
    int n = 0;
    if (connection_limit > 0) limits[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, connection_limit, NULL };
    if (timeout_s > 0) limits[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, NULL };
    if (memory_limit > 0) limits[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)memory_limit, NULL };
    if (per_ip_limit > 0) limits[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit, NULL };
    if (connection_event != NULL) limits[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)connection_event, handler_cls };
    limits[n++] = (struct MHD_OptionItem){ MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)target, handler_cls };
    // poll(), not select(): a process with many descriptors open (the tests', the simulator's
    // with many modems) may hand over a socket at or above FD_SETSIZE, which select mode refuses.
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
    if (event_threads > 0) {
        flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO;
        if (event_threads > 1) limits[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, event_threads, NULL };
    }
    limits[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    if (cert_pem != NULL && key_pem != NULL) {
        return MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, handler, handler_cls,
                                MHD_OPTION_LISTEN_SOCKET, (MHD_socket) listen_fd,
                                MHD_OPTION_HTTPS_MEM_CERT, cert_pem,
                                MHD_OPTION_HTTPS_MEM_KEY, key_pem,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                                MHD_OPTION_ARRAY, limits,
                                MHD_OPTION_END);
    }
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket) listen_fd,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_ARRAY, limits,
                            MHD_OPTION_END);
}

static inline const struct sockaddr *cp_mhd_client_address(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info != NULL ? info->client_addr : NULL;
}

/// The socket of `connection`, or -1.
static inline int cp_mhd_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info != NULL ? (int) info->connect_fd : -1;
}

/// Whether a connection notification says the connection started (else: it closed).
static inline int cp_mhd_connection_started(enum MHD_ConnectionNotificationCode code)
{
    return code == MHD_CONNECTION_NOTIFY_STARTED;
}
