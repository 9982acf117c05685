#pragma once
/// Orderly close of the cellular HTTP engine's sockets, so that nothing of a chain leaves by another route.

/// Closes `fds` so that nothing their peers still send reaches a socket that is gone, whatever
/// the moment (a finished chain or a cancelled one). Why: the kernel answers a segment or a
/// datagram for a closed socket (a TCP RST, an ICMP port unreachable) without the socket's
/// device binding, so the answer follows the main routing table (Wi-Fi) with the bearer's
/// source address. Per socket:
/// - a TCP connect still in progress is first waited for: its SYN-ACK must find the socket;
/// - a connected stream sends FIN, then what the peer still sends (a TLS close_notify, a late
///   response) is read and discarded until the peer closes too;
/// - a datagram socket waits for its `awaited_datagrams[i]` answers still due (DNS queries
///   without an answer yet; NULL for none).
/// All sockets wait together: streams at most `stream_timeout_ms`, datagram sockets at most
/// `datagram_timeout_ms`. A stream whose peer acknowledged our FIN but has not closed by then is
/// reset (`SO_LINGER` 0): the RST leaves through the still-bound socket, and the peer then has
/// nothing more to send (unless its answer is already on the way: give the peers the time they
/// may take). Blocking (at most the longer timeout); thread-safe.
void cshims_close_draining(const int *fds, const int *awaited_datagrams, int count, int stream_timeout_ms,
                           int datagram_timeout_ms);
