#pragma once
/// Orderly close of the cellular HTTP engine's sockets, so that nothing of a chain leaves by another route.

/// Sends FIN on every socket of `fds` that is a connected stream, then reads and discards what
/// the peers still send (a TLS close_notify) until each peer has closed too, or `timeout_ms` pass;
/// then closes all of them. All sockets are drained together: the wait is one round trip, not one
/// per socket. Why: a segment that reaches an already closed socket is answered by the kernel with
/// a RST that has lost the socket's device binding, so it follows the main routing table (Wi-Fi)
/// with the bearer's source address. Blocking (at most `timeout_ms`); thread-safe.
void cshims_close_draining(const int *fds, int count, int timeout_ms);
