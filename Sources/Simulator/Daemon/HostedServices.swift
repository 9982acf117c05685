import CellpathCore
import CellpathCrypto
import Glibc
import HTTPServer
import SimulatedModems
import SimulatedServices
import SimulatorScenario
import Synchronization
import SystemSupport

/// The project credentials of a world's fake API, made at `sim up` and kept in the run
/// directory (`credentials.json`, mode 0600); `sim env` prints them.
public struct SimulatorCredentials: Sendable, Equatable, Codable {
    public var clientID: String
    public var clientSecret: String

    /// Fresh random credentials.
    static func random() -> SimulatorCredentials {
        SimulatorCredentials(clientID: "sim-\(RandomBytes.hex(8))", clientSecret: RandomBytes.hex(24))
    }

    /// Reads the credentials of the world in `run`, or nil when it has none.
    public static func load(_ run: RunDirectory) -> SimulatorCredentials? {
        guard let bytes = try? FileSystem.read(run.credentialsFile) else { return nil }
        return try? JSONDecoding.decode(SimulatorCredentials.self, from: bytes)
    }

    func save(_ run: RunDirectory) throws {
        try FileSystem.write(try JSONEncoding.encode(self), to: run.credentialsFile, mode: 0o600)
    }

    /// The fake Twilio Verify's account and service, derived from these credentials: the
    /// client id's hex as the SIDs' (`AC…`, `VA…`), the client secret as the auth token.
    public var twilio: FakeTwilioVerify.Configuration {
        let hex = String(clientID.filter(\.isHexDigit).prefix(32))
        let padded = hex + String(repeating: "0", count: 32 - hex.count)
        return FakeTwilioVerify.Configuration(
            accountSID: "AC" + padded, authToken: clientSecret, serviceSID: "VA" + padded,
            baseURL: "https://\(WorldTopology.twilioHost)")
    }

    /// The fake Vonage application's id and API key (derived as `twilio`'s), its key `key`.
    public func vonage(key: JWSKey?) -> FakeVonageVerify.Configuration {
        FakeVonageVerify.Configuration(
            applicationID: "app-" + clientID, applicationKey: key, apiKey: clientID, apiSecret: clientSecret,
            baseURL: "https://\(WorldTopology.vonageHost)")
    }
}

/// Hosts the fake tru.ID API (203.0.113.10:443 and [2001:db8:113::10]:443 in the internet
/// namespace, and :80 with the `httpsDowngrade` fault; IPv4 only in a NAT64 world), the
/// providers' fake APIs and the fake CAMARA operator on the same addresses by host name
/// (`verify.twilio.test`, `api.vonage.test`, `api-eu.vonage.test`: Vonage's Number
/// Verification, `operator.camara.test`), and the carrier's identification endpoint
/// (100.64.0.1:80 and [2001:db8:64::1]:80 in the carrier namespace); every request is appended
/// to the run directory's request log. Makes the webhook key, the Vonage application key and the
/// CAMARA client's key; with a `callbackURL`, posts webhooks from the internet namespace and
/// expires checks on time (a sweep every second).
final class WebServicesService: SimulatorService {
    let name = "api"
    private let services = Mutex<SimulatedWebServices?>(nil)
    private let poster = Mutex<WebhookPoster?>(nil)
    private let sweeper = Mutex<pthread_t?>(nil)
    private let sweeping = Atomic<Bool>(false)

    func start(_ context: SimulatorContext) throws {
        let run = context.run, topology = context.topology
        let credentials = SimulatorCredentials.random()
        try credentials.save(run)
        let signer = try WebhookSigner(privateKeyPEM: try Self.makeRSAKey(at: run.webhookKey))
        let vonageKey = try JWSKey.rsa(
            pem: try Self.makeRSAKey(at: run.vonageApplicationKey), what: "the Vonage application key")
        let camaraOperator = try Self.camaraOperator(
            run, faults: context.scenario.providers.camara, subscribers: context.subscribers)
        let webhookPoster = try WebhookPoster(namespace: topology.inetNamespace, log: { context.log($0) })
        poster.withLock { $0 = webhookPoster }
        let tls = try HTTPServer.TLSIdentity.files(certificate: run.serverCertificate, privateKey: run.serverKey)
        let log = try RequestLogFile(path: run.requestLog)
        var sockets: [Int32] = []
        var handedOver = false
        do {
            // Both families, except for the API behind NAT64 (an IPv4-only host).
            let apiAddresses =
                [WorldTopology.apiAddress] + (context.scenario.nat64 ? [] : [WorldTopology.apiIPv6Address])
            func listen(_ namespace: String, _ addresses: [String], _ port: UInt16) throws -> [Int32] {
                try addresses.map { address in
                    let fd = try context.listeningSocket(namespace: namespace, address: address, port: port)
                    sockets.append(fd)
                    return fd
                }
            }
            let apiTLS = try listen(topology.inetNamespace, apiAddresses, 443)
            let apiPlain =
                context.scenario.carrier.httpsDowngrade ? try listen(topology.inetNamespace, apiAddresses, 80) : []
            let carrier = try listen(
                topology.carrierNamespace, [WorldTopology.carrierEndpointAddress, WorldTopology.carrierEndpointIPv6], 80
            )
            let configuration = FakeTruAPIConfiguration(
                clientID: credentials.clientID, clientSecret: credentials.clientSecret,
                faults: context.scenario.api,
                rateLimitPerHour: context.scenario.api.rateLimitPerHour,
                checkTTL: context.scenario.api.checkTTLSeconds,
                tokenLifetime: context.scenario.api.tokenLifetimeSeconds,
                retainedChecks: context.scenario.api.retainedChecks,
                modems: context.scenario.modems)
            handedOver = true
            let web = try SimulatedWebServices(
                configuration: configuration, carrierFaults: context.scenario.carrier, subscribers: context.subscribers,
                tls: tls, sockets: .init(apiTLS: apiTLS, apiPlain: apiPlain, carrier: carrier),
                apiNamespace: topology.inetNamespace, carrierNamespace: topology.carrierNamespace,
                webhooks: WebhookDispatch(signer: signer, deliver: { webhookPoster.deliver($0) }),
                providers: [
                    WorldTopology.twilioHost: FakeTwilioVerify(
                        configuration: credentials.twilio, directory: context.subscribers,
                        faults: context.scenario.providers.twilio),
                    WorldTopology.vonageHost: FakeVonageVerify(
                        configuration: credentials.vonage(key: vonageKey), directory: context.subscribers,
                        faults: context.scenario.providers.vonage),
                    WorldTopology.vonageNetworkHost: FakeCAMARAOperator(
                        baseURL: WorldTopology.vonageNetworkURL, dialect: .vonage,
                        faults: context.scenario.providers.vonageNV,
                        clients: [
                            RegisteredCAMARAClient(
                                clientID: credentials.vonage(key: nil).applicationID, publicKey: vonageKey,
                                redirectURIs: [WorldTopology.vonageRedirectURI])
                        ],
                        directory: context.subscribers),
                    WorldTopology.operatorHost: camaraOperator
                ],
                log: { log.append($0) })
            services.withLock { $0 = web }
            if context.scenario.api.callbackURL != nil { try startSweeping(web.api) }
        } catch {
            // Once handed over, SimulatedWebServices closes the sockets itself when it fails.
            if !handedOver { sockets.forEach { close($0) } }
            throw error
        }
    }

    /// A fresh 2048-bit RSA private key in PEM, written to `path` (mode 0600) and returned.
    private static func makeRSAKey(at path: String) throws -> [UInt8] {
        try makeKey(at: path, ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
    }

    /// A fresh private key made by `openssl genpkey` with `options`, written to `path` (mode
    /// 0600) and returned as PEM.
    private static func makeKey(at path: String, _ options: [String]) throws -> [UInt8] {
        // Private before openssl writes the key into it.
        try FileSystem.write([UInt8](), to: path, mode: 0o600)
        _ = try Subprocess.check(["openssl", "genpkey"] + options + ["-out", path])
        return try FileSystem.read(path)
    }

    func stop() {
        sweeping.store(false, ordering: .releasing)
        if let thread = sweeper.withLock({ $0.take() }) { Threads.join(thread) }
        poster.withLock {
            $0?.stop(); $0 = nil
        }
        services.withLock {
            $0?.stop(); $0 = nil
        }
    }

    /// The fake CAMARA operator with the world's one client: a fresh EC P-256 key (mode 0600)
    /// whose public half it registers, with the world's redirect URI.
    private static func camaraOperator(
        _ run: RunDirectory, faults: OIDCFaults, subscribers: any SubscriberDirectory
    ) throws
        -> FakeCAMARAOperator
    {
        let key = try JWSKey(
            pem: try makeKey(at: run.camaraClientKey, ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]))
        let client = RegisteredCAMARAClient(
            clientID: WorldTopology.camaraClientID, publicKey: try JWSKey(pem: key.publicKeyPEM, isPrivate: false),
            redirectURIs: [WorldTopology.camaraRedirectURI])
        return FakeCAMARAOperator(
            baseURL: WorldTopology.operatorURL, faults: faults, clients: [client], directory: subscribers)
    }

    /// Expires due checks every second, so that their EXPIRED webhooks go out on time.
    private func startSweeping(_ api: FakeTruAPI) throws {
        sweeping.store(true, ordering: .releasing)
        let thread = try Threads.start { [self] in
            while sweeping.load(ordering: .acquiring) {
                api.expireDueChecks()
                for _ in 0 ..< 10 where sweeping.load(ordering: .acquiring) { usleep(100_000) }
            }
        }
        sweeper.withLock { $0 = thread }
    }
}

/// Hosts the simulated MBIM/QMI modems on pseudo-terminals under the run directory, their
/// bearers wired to the world's data path.
final class ModemFleetService: SimulatorService, ModemControlSource {
    let name = "modems"
    private let fleet = Mutex<SimulatedModemFleet?>(nil)

    func start(_ context: SimulatorContext) throws {
        let modems = SimulatedModemFleet(
            scenario: context.scenario, runDirectory: context.run.path, bearerNetwork: context.dataPlane)
        try modems.start()
        fleet.withLock { $0 = modems }
    }

    func stop() {
        fleet.withLock {
            $0?.stop(); $0 = nil
        }
    }

    func controlStatus(modem index: Int) -> ModemControlStatus? {
        fleet.withLock { fleet in fleet?.devices.first { $0.index == index }?.controlStatus }
    }

    func unlockFCC(modem index: Int) -> Bool {
        fleet.withLock { fleet in
            guard let device = fleet?.devices.first(where: { $0.index == index }), device.isRunning else {
                return false
            }
            device.unlockFCC()
            return true
        }
    }

    func device(modem index: Int) -> SimulatedModemDevice? {
        fleet.withLock { fleet in fleet?.devices.first { $0.index == index } }
    }

    func nextFreeNumber() -> Int {
        fleet.withLock { $0?.nextFreeNumber() ?? 0 }
    }
}

/// The request log: one line per request, appended from server threads. Thread-safe.
final class RequestLogFile: Sendable {
    private let fd: Int32
    private let lock = Mutex(())

    init(path: String) throws {
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CellpathError(.unavailable, "cannot open \(path): \(SystemError.text(errno))") }
    }

    deinit { close(fd) }

    func append(_ line: String) {
        let bytes = Array((line.hasSuffix("\n") ? line : line + "\n").utf8)
        lock.withLock { _ in try? IO.writeAll(fd, bytes) }
    }
}
