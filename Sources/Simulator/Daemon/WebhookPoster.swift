import CellpathCore
import CShims
import Glibc
import SimulatedServices
import Synchronization
import SystemSupport

/// Delivers the fake API's webhooks: each one is POSTed over plain HTTP from a socket in the
/// internet namespace, on a thread of its own, and retried as tru.ID does while the receiver
/// does not answer 200 (after 10 s, then 20 s, … 60 s, then given up). Any thread.
public final class WebhookPoster: Sendable {
    /// tru.ID's retry delays, in seconds.
    public static let defaultRetryDelays: [Double] = [10, 20, 30, 40, 50, 60]

    private let namespacePath: String
    private let retryDelays: [Double]
    private let log: @Sendable (String) -> Void
    private let stopped = Atomic<Bool>(false)

    /// `namespace`: where the POSTs come from (`cp-inet`); `log` gets one line per attempt.
    public init(namespace: String, retryDelays: [Double] = WebhookPoster.defaultRetryDelays,
                log: @escaping @Sendable (String) -> Void) {
        namespacePath = "/run/netns/\(namespace)"
        self.retryDelays = retryDelays
        self.log = log
    }

    /// Starts delivering `webhook`; returns at once.
    public func deliver(_ webhook: SignedWebhook) {
        guard !stopped.load(ordering: .acquiring) else { return }
        do {
            try Threads.detach { [self] in run(webhook) }
        } catch {
            log("webhook to \(webhook.url) not sent: \(error)")
        }
    }

    /// Ends the deliveries: no new attempt starts (one under way finishes within its timeouts).
    public func stop() { stopped.store(true, ordering: .releasing) }

    private func run(_ webhook: SignedWebhook) {
        for (attempt, delay) in ([0] + retryDelays).enumerated() {
            guard wait(seconds: delay) else { return }
            let outcome = post(webhook)
            log("webhook \(webhook.headers["x-tru-callback"] ?? "") attempt \(attempt + 1) POST \(webhook.url): \(outcome)")
            if outcome == "200" { return }
        }
    }

    /// Sleeps `seconds` in short steps; false when stopped meanwhile.
    private func wait(seconds: Double) -> Bool {
        var left = seconds
        while left > 0 {
            if stopped.load(ordering: .acquiring) { return false }
            let step = min(left, 0.1)
            usleep(UInt32(step * 1_000_000))
            left -= step
        }
        return !stopped.load(ordering: .acquiring)
    }

    /// One POST with 5-second timeouts; the answer's status code as text, or why there was none.
    private func post(_ webhook: SignedWebhook) -> String {
        var error = [CChar](repeating: 0, count: 256)
        let fd = cshims_socket_in_netns(namespacePath, AF_INET, Int32(SOCK_STREAM.rawValue), 0, &error, error.count)
        guard fd >= 0 else { return "no socket: \(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))" }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))  // connect too
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let address = IPAddress.ipv4Bytes(webhook.host) else { return "not a numeric IPv4 host: \(webhook.host)" }
        var peer = sockaddr_in()
        peer.sin_family = sa_family_t(AF_INET)
        peer.sin_port = webhook.port.bigEndian
        withUnsafeMutableBytes(of: &peer.sin_addr) { $0.copyBytes(from: address) }
        let connected = withUnsafePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return "connect: \(SystemError.text(errno))" }
        var head = "POST \(webhook.pathAndQuery) HTTP/1.1\r\n"
        for field in webhook.headers { head += "\(field.name): \(field.value)\r\n" }
        head += "Content-Length: \(webhook.body.count)\r\nConnection: close\r\n\r\n"
        do {
            try IO.writeAll(fd, Array(head.utf8) + webhook.body)
            let answer = try IO.readAll(fd, limit: 64 << 10)
            let statusLine = String(decoding: answer.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }, as: UTF8.self)
            let parts = statusLine.split(separator: " ")
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, Int(parts[1]) != nil else {
                return "no HTTP answer"
            }
            return String(parts[1])
        } catch {
            return "\(error)"
        }
    }
}
