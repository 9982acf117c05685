import CellpathCore
import CellpathCrypto
import HTTPServer
import SimulatedServices
import SimulatorScenario
import Synchronization
import SystemSupport
import TestSupport
import Testing

@testable import CAMARA
@testable import CellularHTTP

/// A fresh PEM private key made with the openssl CLI, as the simulated world makes its keys:
/// `rsa` (2048 bits) or `ec` (P-256).
func makeClientKey(_ kind: JWSAlgorithm) async throws -> JWSKey {
    let directory = try TemporaryDirectory.make("cptest-camara-key")
    defer { FileSystem.removeTree(directory) }
    let options =
        kind == .rs256
        ? ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
        : ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
    let result = try await ProcessRunner.running(["openssl", "genpkey"] + options + ["-out", "\(directory)/key.pem"])
    try #require(result.status == 0, "\(result.stderr)")
    return try JWSKey(pem: try FileSystem.read("\(directory)/key.pem"))
}

/// The fake operator called in process: a `CAMARATransport` for the backend (from the Wi-Fi
/// address), and a device leg that opens the authorize URL from a chosen source address and
/// follows redirects until the request's own stop rule accepts one, as the chain runner does.
final class OperatorTransport: CAMARATransport {
    static let baseURL = "https://operator.camara.test"
    static let redirectURI = baseURL + FakeCAMARAOperator.callbackPath
    static let clientID = "cp-camara-client"
    static let backendAddress = "192.0.2.23"

    let fake: FakeCAMARAOperator
    let key: JWSKey
    private let log = Mutex<[HTTPClientRequest]>([])
    /// Statuses to answer the next requests to a URL ending in the key with, before the fake does.
    private let failures = Mutex<[String: [Int]]>([:])

    /// An operator whose one client registered `key`'s public half (and `secret`, if given).
    init(key: JWSKey, secret: String? = nil, directory: any SubscriberDirectory = OneSubscriber()) throws {
        self.key = key
        let registered = RegisteredCAMARAClient(
            clientID: Self.clientID, publicKey: try JWSKey(pem: key.publicKeyPEM, isPrivate: false), secret: secret,
            redirectURIs: [Self.redirectURI])
        fake = FakeCAMARAOperator(baseURL: Self.baseURL, clients: [registered], directory: directory)
    }

    var requests: [HTTPClientRequest] { log.withLock { $0 } }

    /// The URLs whose hosts the client asked to look up ahead, in order.
    var lookedUpAhead: [String] { lookups.withLock { $0 } }
    private let lookups = Mutex<[String]>([])

    func resolveAhead(_ url: String) {
        lookups.withLock { $0.append(url) }
    }

    /// Answers the next requests to a URL ending in `suffix` with `statuses` (a 429 with
    /// `Retry-After: 0`), one each, before the fake answers again.
    func fail(_ statuses: [Int], at suffix: String) {
        failures.withLock { $0[suffix, default: []] += statuses }
    }

    func send(_ request: HTTPClientRequest) async throws(FetchFailure) -> HTTPClientResponse {
        log.withLock { $0.append(request) }
        let failure = failures.withLock { all -> Int? in
            guard let suffix = all.keys.first(where: { request.url.hasSuffix($0) }), !all[suffix]!.isEmpty else {
                return nil
            }
            return all[suffix]!.removeFirst()
        }
        if let failure {
            return FakeAPITransport.clientResponse(
                HTTPResponse(
                    status: failure, contentType: "application/json",
                    body: #"{"status":\#(failure),"code":"UNAVAILABLE","message":"scripted"}"#,
                    headers: failure == 429 ? ["Retry-After": "0"] : [:]))
        }
        return FakeAPITransport.clientResponse(
            fake.handle(
                FakeAPITransport.serverRequest(
                    request.method, request.url, headers: request.headers, body: request.body,
                    from: Self.backendAddress)))
    }

    /// A client of this operator authenticating with `authentication` (its key by default).
    /// A client of the operator; with `knownMetadata`, its endpoints are known (no discovery).
    func client(_ authentication: ClientAuthentication? = nil, knownMetadata: Bool = false) -> CAMARAClient {
        CAMARAClient(
            endpoint: CAMARAEndpoint(
                apiRoot: Self.baseURL, issuer: Self.baseURL, clientID: Self.clientID,
                authentication: authentication ?? .privateKeyJWT(key, keyID: nil),
                metadata: knownMetadata
                    ? ProviderMetadata(
                        issuer: Self.baseURL, authorizationEndpoint: Self.baseURL + fake.dialect.authorizePath,
                        tokenEndpoint: fake.tokenEndpoint) : nil),
            transport: self, pause: { _ in })
    }

    /// A device leg from `address`; `rewrite` may change the Location the chain stops at.
    func deviceLeg(
        from address: String, rewrite: @escaping @Sendable (String) -> String = { $0 }
    ) -> CAMARANumberVerification.DeviceLeg {
        { [fake] request in
            var url = request.url
            var hops: [HopTrace] = []
            for index in 1 ... request.maxHops {
                let response = fake.handle(FakeAPITransport.serverRequest("GET", url, from: address))
                var hop = FakeAPITransport.clientResponse(response).trace
                hop.index = index
                hop.url = url
                hops.append(hop)
                guard (300 ..< 400).contains(response.status), let location = response.headers["Location"],
                    case .success(let next) = CurlURL.resolve(location, against: try! CurlURL.parse(url).get())
                else {
                    return Self.report(hops, status: response.status, url: url, stoppedAt: nil)
                }
                if request.stopAtRedirect?(next.text) == true {
                    return Self.report(hops, status: response.status, url: url, stoppedAt: rewrite(next.text))
                }
                url = next.text
            }
            return FetchReport(
                interfaceName: "wwan0", modemBackend: nil, localAddresses: [address], dnsServers: [], hops: hops,
                result: nil, failure: FetchFailure(.tooManyHops, "too many hops"), totalMs: 0)
        }
    }

    private static func report(_ hops: [HopTrace], status: Int, url: String, stoppedAt: String?) -> FetchReport {
        FetchReport(
            interfaceName: "wwan0", modemBackend: nil, localAddresses: [], dnsServers: [], hops: hops,
            result: FetchResult(
                finalStatus: status, finalURL: url, finalBody: "", finalBodyTruncated: false, finalContentType: nil,
                json: nil, stoppedAt: stoppedAt),
            failure: nil, totalMs: 0)
    }
}
