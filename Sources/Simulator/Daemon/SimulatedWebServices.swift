import Glibc
import HTTPServer
import SimulatedServices
import SimulatorScenario
import Synchronization

/// The fake tru.ID API (with its webhooks, when given), the providers' fake APIs and the fake
/// CAMARA operator (by host name) and the carrier's identification endpoint,
/// wired to one shared assertion ledger and running on their HTTP servers: the API over TLS (and plain HTTP for
/// the `httpsDowngrade` fault), the carrier over plain HTTP. Start and stop from any thread.
public final class SimulatedWebServices: Sendable {
    /// Listening sockets handed over to the servers (each is closed when they stop), one per
    /// address family served.
    public struct Sockets: Sendable {
        /// 203.0.113.10:443 (and [2001:db8:113::10]:443) in the internet namespace.
        public var apiTLS: [Int32]
        /// The same addresses' port 80, or none to serve the API over TLS only.
        public var apiPlain: [Int32]
        /// 100.64.0.1:80 (and [2001:db8:64::1]:80) in the carrier namespace.
        public var carrier: [Int32]

        public init(apiTLS: [Int32], apiPlain: [Int32], carrier: [Int32]) {
            self.apiTLS = apiTLS
            self.apiPlain = apiPlain
            self.carrier = carrier
        }

        var all: [Int32] { apiTLS + apiPlain + carrier }
    }

    public let api: FakeTruAPI
    public let carrier: CarrierIdentificationEndpoint
    private let servers: Mutex<[HTTPServer]>

    /// Starts both services; `log` receives one `RequestLog` line per request, from server
    /// threads (it must be thread-safe). On failure, every socket is closed and nothing runs.
    public init(
        configuration: FakeTruAPIConfiguration, carrierFaults: CarrierFaults, subscribers: any SubscriberDirectory,
        tls: HTTPServer.TLSIdentity, sockets: Sockets, apiNamespace: String, carrierNamespace: String,
        clock: SimulatorClock = .system, webhooks: WebhookDispatch? = nil,
        providers: [String: any SimulatedHTTPEndpoint] = [:],
        log: @escaping @Sendable (String) -> Void
    ) throws {
        let ledger = SubscriberAssertionLedger()
        api = FakeTruAPI(
            configuration: configuration, directory: subscribers, ledger: ledger, clock: clock, webhooks: webhooks)
        carrier = CarrierIdentificationEndpoint(
            directory: subscribers, faults: carrierFaults, ledger: ledger,
            baseURL: configuration.carrierURL, apiBaseURL: configuration.baseURL)
        // The providers' fakes answer their own host names on the API's TLS address.
        let tlsHosts = HostRouter(fallback: api, byHost: providers)
        var started: [HTTPServer] = []
        var pending = sockets.all
        do {
            for fd in sockets.apiTLS {
                pending.removeFirst()
                started.append(
                    try tlsHosts.serve(on: .socket(fd), tls: tls, namespace: apiNamespace, clock: clock, log: log))
            }
            for fd in sockets.apiPlain {
                pending.removeFirst()
                started.append(try api.serve(on: .socket(fd), namespace: apiNamespace, clock: clock, log: log))
            }
            for fd in sockets.carrier {
                pending.removeFirst()
                started.append(try carrier.serve(on: .socket(fd), namespace: carrierNamespace, clock: clock, log: log))
            }
        } catch {
            started.forEach { $0.stop() }
            pending.forEach { close($0) }
            throw error
        }
        servers = Mutex(started)
    }

    /// Stops every server (unanswered requests are cut off). Idempotent.
    public func stop() {
        let running = servers.withLock { all -> [HTTPServer] in
            let current = all
            all = []
            return current
        }
        running.forEach { $0.stop() }
    }

    deinit { stop() }
}
