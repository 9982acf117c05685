import CShims
import CellpathCore
import Glibc
import SimulatedServices
import Synchronization
import SystemSupport

/// Delivers the fake API's webhooks from a bounded queue on a fixed pool of threads: each one
/// is POSTed over plain HTTP from a socket in the internet namespace, and retried as tru.ID does
/// while the receiver does not answer 200 (after 10 s, then 20 s, … 60 s, then given up). A
/// delivery holds its place in the queue through its retries, but no thread while it waits; a
/// webhook that finds the queue full is dropped (and logged). Any thread.
public final class WebhookPoster: Sendable {
    /// tru.ID's retry delays, in seconds.
    public static let defaultRetryDelays: [Double] = [10, 20, 30, 40, 50, 60]
    /// Deliveries under way (waiting for an attempt or being attempted) beyond which new
    /// webhooks are dropped.
    public static let defaultCapacity = 1000
    /// Threads that make the attempts.
    public static let defaultWorkers = 4

    /// One webhook under way: its next attempt and when that is due.
    private struct Delivery: Sendable {
        var webhook: SignedWebhook
        var attempt: Int
        var due: Double
    }

    /// The queue the workers share.
    private struct Queue: Sendable {
        var waiting: [Delivery] = []
        /// Deliveries taken by a worker for an attempt, still counted against the capacity.
        var attempting = 0
        var dropped = 0
        var stopped = false
        /// Changes with every queued delivery, so that idle workers notice it.
        var generation = 0
    }

    private let namespacePath: String
    private let retryDelays: [Double]
    private let capacity: Int
    private let log: @Sendable (String) -> Void
    private let queue = WaitableValue(Queue())
    private let workers = Mutex<[pthread_t]>([])

    /// `namespace`: where the POSTs come from (`cp-inet`); `log` gets one line per attempt and
    /// per dropped webhook; `capacity`: deliveries under way at most; `workers`: threads started now.
    public init(
        namespace: String, retryDelays: [Double] = WebhookPoster.defaultRetryDelays,
        capacity: Int = WebhookPoster.defaultCapacity, workers: Int = WebhookPoster.defaultWorkers,
        log: @escaping @Sendable (String) -> Void
    ) throws {
        namespacePath = "/run/netns/\(namespace)"
        self.retryDelays = retryDelays
        self.capacity = capacity
        self.log = log
        do {
            for _ in 0 ..< max(1, workers) {
                let thread = try Threads.start { [self] in work() }
                self.workers.withLock { $0.append(thread) }
            }
        } catch {
            stop()
            throw CellpathError(.unavailable, "cannot start the webhook threads: \(error)")
        }
    }

    /// Queues `webhook` for delivery and returns at once: true when queued, false when the
    /// queue is full or the poster stopped (the webhook is then dropped).
    @discardableResult
    public func deliver(_ webhook: SignedWebhook) -> Bool {
        var queued = false
        var droppedSoFar: Int?
        queue.update { queue in
            guard !queue.stopped else { return }
            guard queue.waiting.count + queue.attempting < capacity else {
                queue.dropped += 1
                droppedSoFar = queue.dropped
                return
            }
            queue.waiting.append(Delivery(webhook: webhook, attempt: 1, due: MonotonicClock.now))
            queue.generation &+= 1
            queued = true
        }
        if let droppedSoFar {
            // The first drop, then one line per thousand: a flood must not flood the log too.
            if droppedSoFar == 1 || droppedSoFar % 1000 == 0 {
                log(
                    "webhook \(webhook.headers["x-tru-callback"] ?? "") to \(webhook.url) dropped: \(capacity) deliveries under way (\(droppedSoFar) dropped so far)"
                )
            }
        }
        return queued
    }

    /// Ends the deliveries: no new attempt starts, and the workers end (one under way finishes
    /// within its timeouts first).
    public func stop() {
        queue.update { $0.stopped = true }
        for thread in workers.withLock({ workers in
            defer { workers = [] }; return workers
        }) { Threads.join(thread) }
    }

    /// A worker: takes the delivery that is due first, attempts it, queues its retry.
    private func work() {
        while let delivery = nextDueDelivery() {
            let outcome = post(delivery.webhook)
            log(
                "webhook \(delivery.webhook.headers["x-tru-callback"] ?? "") attempt \(delivery.attempt) POST \(delivery.webhook.url): \(outcome)"
            )
            let retryDelay =
                outcome == "200" || delivery.attempt > retryDelays.count ? nil : retryDelays[delivery.attempt - 1]
            queue.update { queue in
                queue.attempting -= 1
                guard let retryDelay, !queue.stopped else { return }
                queue.waiting.append(
                    Delivery(
                        webhook: delivery.webhook, attempt: delivery.attempt + 1,
                        due: MonotonicClock.now + retryDelay))
                queue.generation &+= 1
            }
        }
    }

    /// Blocks until a delivery is due and takes it; nil once stopped.
    private func nextDueDelivery() -> Delivery? {
        while true {
            var taken: Delivery?
            var stopped = false
            var nextDue = Double.infinity
            var generation = 0
            queue.update { queue in
                stopped = queue.stopped
                generation = queue.generation
                guard !stopped,
                    let first = queue.waiting.indices.min(by: { queue.waiting[$0].due < queue.waiting[$1].due })
                else { return }
                if queue.waiting[first].due <= MonotonicClock.now {
                    taken = queue.waiting.remove(at: first)
                    queue.attempting += 1
                } else {
                    nextDue = queue.waiting[first].due
                }
            }
            if stopped { return nil }
            if let taken { return taken }
            let wait = min(max(nextDue - MonotonicClock.now, 0.001), 1)
            _ = queue.wait(
                until: { $0.stopped || $0.generation != generation }, timeout: .milliseconds(Int(wait * 1000)))
        }
    }

    /// One POST with 5-second timeouts; the answer's status code as text, or why there was none.
    private func post(_ webhook: SignedWebhook) -> String {
        var error = [CChar](repeating: 0, count: 256)
        let fd = cshims_socket_in_netns(namespacePath, AF_INET, Int32(SOCK_STREAM.rawValue), 0, &error, error.count)
        guard fd >= 0 else {
            return
                "no socket: \(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))"
        }
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
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return "connect: \(SystemError.text(errno))" }
        var head = "POST \(webhook.pathAndQuery) HTTP/1.1\r\n"
        for field in webhook.headers { head += "\(field.name): \(field.value)\r\n" }
        head += "Content-Length: \(webhook.body.count)\r\nConnection: close\r\n\r\n"
        do {
            try IO.writeAll(fd, Array(head.utf8) + webhook.body)
            let answer = try IO.readAll(fd, limit: 64 << 10)
            let statusLine = String(
                decoding: answer.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }, as: UTF8.self)
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
