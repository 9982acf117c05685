import Synchronization
import SystemSupport

/// Counters and histograms of one `serve` process, in Prometheus text format.
public final class ServerMetrics: Sendable {
    /// Upper bounds (seconds) of the upstream latency histogram's buckets.
    static let latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct State {
        var requests: [String: Int] = [:]
        var inFlight = 0
        var upstreamBuckets = [Int](repeating: 0, count: ServerMetrics.latencyBuckets.count)
        var upstreamCount = 0
        var upstreamSum = 0.0
    }

    private let state = Mutex(State())
    /// The `provider` label of the requests and upstream calls: the provider serve answers with.
    private let providerLabel: String

    public init(provider: String) { providerLabel = "provider=\"\(provider)\"" }

    func started() { state.withLock { $0.inFlight += 1 } }

    func finished(route: String, method: String, status: Int) {
        state.withLock { $0.inFlight -= 1 }
        counted(route: route, method: method, status: status)
    }

    /// Counts a request that was never in flight in the handler (the HTTP server answered it).
    /// A method outside the standard ones counts as `other`: a client's made-up methods must
    /// neither add label values without bound nor put quotes in the exposition.
    func counted(route: String, method: String, status: Int) {
        let label = Self.standardMethods.contains(method) ? method : "other"
        state.withLock {
            $0.requests["\(providerLabel),route=\"\(route)\",method=\"\(label)\",status=\"\(status)\"", default: 0] += 1
        }
    }

    static let standardMethods: Set<String> = [
        "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"
    ]

    func upstreamCall(seconds: Double) {
        state.withLock { current in
            current.upstreamCount += 1
            current.upstreamSum += seconds
            for (index, bound) in Self.latencyBuckets.enumerated() where seconds <= bound {
                current.upstreamBuckets[index] += 1
            }
        }
    }

    /// The metrics as a Prometheus text exposition; `tokenRequests` from the API client.
    func exposition(tokenRequests: Int) -> String {
        let current = state.withLock { $0 }
        var lines = [
            "# HELP cellpath_serve_requests_total Requests answered, by provider, route, method and status.",
            "# TYPE cellpath_serve_requests_total counter"
        ]
        for key in current.requests.keys.sorted() {
            lines.append("cellpath_serve_requests_total{\(key)} \(current.requests[key]!)")
        }
        lines += [
            "# HELP cellpath_serve_requests_in_flight Requests being answered.",
            "# TYPE cellpath_serve_requests_in_flight gauge",
            "cellpath_serve_requests_in_flight \(current.inFlight)",
            "# HELP cellpath_serve_token_requests_total Access-token requests sent to the tru.ID API.",
            "# TYPE cellpath_serve_token_requests_total counter",
            "cellpath_serve_token_requests_total \(tokenRequests)",
            "# HELP cellpath_serve_heap_bytes_in_use Bytes allocated and not freed (live objects; a leak grows it at rest).",
            "# TYPE cellpath_serve_heap_bytes_in_use gauge",
            "cellpath_serve_heap_bytes_in_use \(HeapUsage.bytesInUse)",
            "# HELP cellpath_serve_upstream_seconds Latency of calls to the provider's API.",
            "# TYPE cellpath_serve_upstream_seconds histogram"
        ]
        for (index, bound) in Self.latencyBuckets.enumerated() {
            lines.append(
                "cellpath_serve_upstream_seconds_bucket{\(providerLabel),le=\"\(bound)\"} \(current.upstreamBuckets[index])"
            )
        }
        lines += [
            "cellpath_serve_upstream_seconds_bucket{\(providerLabel),le=\"+Inf\"} \(current.upstreamCount)",
            "cellpath_serve_upstream_seconds_sum{\(providerLabel)} \(current.upstreamSum)",
            "cellpath_serve_upstream_seconds_count{\(providerLabel)} \(current.upstreamCount)"
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Requests per client address in the current minute.
final class ClientRateLimiter: Sendable {
    private struct Window { var minute: Int; var count: Int }
    private let limit: Int
    private let windows = Mutex<[String: Window]>([:])

    init(requestsPerMinute: Int) { limit = requestsPerMinute }

    /// Counts a request of `client` at `now` (seconds); the seconds to wait when over the limit.
    func admit(_ client: String, now: Double) -> Int? {
        guard limit > 0 else { return nil }
        let minute = Int(now / 60)
        return windows.withLock { windows in
            if windows.count > 100_000 { windows = windows.filter { $0.value.minute == minute } }
            var window = windows[client].flatMap { $0.minute == minute ? $0 : nil } ?? Window(minute: minute, count: 0)
            window.count += 1
            windows[client] = window
            return window.count > limit ? max(1, (minute + 1) * 60 - Int(now)) : nil
        }
    }
}
