import CellpathCore
import FoundationEssentials
import HTTPServer
import SimulatedServices
import SimulatorScenario
import Synchronization

@testable import CellularHTTP
@testable import Workflow

/// A subscriber directory with one fixed bearer address.
struct OneSubscriber: SubscriberDirectory {
    static let address = "100.64.23.2"
    static let msisdn = "+447940448591"
    let sim = SimulatedSIM(msisdn: OneSubscriber.msisdn)

    func subscriber(holding address: String) -> SimulatedSIM? { address == Self.address ? sim : nil }
    func subscriber(msisdn: String) -> SimulatedSIM? { msisdn == sim.msisdn ? sim : nil }
    func network(holding address: String) -> SimulatedNetwork? { address == Self.address ? SimulatedNetwork() : nil }
}

/// The simulator's fake tru.ID API and carrier, called in-process (no sockets): a transport
/// for `TruAPIClient` that records every request and can answer some with scripted faults.
final class FakeAPITransport: TruAPITransport {
    static let clientID = "cp-client", clientSecret = "cp-secret"
    static let endpoint = TruAPIEndpoint(
        baseURL: "https://api.truid.test/", clientID: clientID, clientSecret: clientSecret)

    let api: FakeTruAPI
    let carrier: CarrierIdentificationEndpoint
    private let log = Mutex<[HTTPClientRequest]>([])
    private let script = Mutex<[@Sendable (HTTPClientRequest) -> Result<HTTPClientResponse, FetchFailure>?]>([])
    /// Delay of token answers, so that concurrent callers overlap one token request.
    let tokenDelay: Duration

    init(
        configuration: FakeTruAPIConfiguration = FakeTruAPIConfiguration(
            clientID: clientID, clientSecret: clientSecret),
        tokenDelay: Duration = .zero
    ) {
        let directory = OneSubscriber(), ledger = SubscriberAssertionLedger()
        api = FakeTruAPI(configuration: configuration, directory: directory, ledger: ledger)
        carrier = CarrierIdentificationEndpoint(directory: directory, faults: CarrierFaults(), ledger: ledger)
        self.tokenDelay = tokenDelay
    }

    /// Requests sent so far, in order.
    var requests: [HTTPClientRequest] { log.withLock { $0 } }
    var tokenRequests: [HTTPClientRequest] { requests.filter { $0.url.hasSuffix("/oauth2/v1/token") } }

    /// Answers the next request for which `rule` returns a value with that value instead of the API.
    func script(_ rule: @escaping @Sendable (HTTPClientRequest) -> Result<HTTPClientResponse, FetchFailure>?) {
        script.withLock { $0.append(rule) }
    }

    func send(_ request: HTTPClientRequest) async throws(FetchFailure) -> HTTPClientResponse {
        log.withLock { $0.append(request) }
        if request.url.hasSuffix("/oauth2/v1/token") && tokenDelay > .zero { try? await Task.sleep(for: tokenDelay) }
        let scripted: Result<HTTPClientResponse, FetchFailure>? = script.withLock { rules in
            for (index, rule) in rules.enumerated() {
                if let answer = rule(request) {
                    rules.remove(at: index)
                    return answer
                }
            }
            return nil
        }
        if let scripted { return try scripted.get() }
        return Self.clientResponse(
            api.handle(
                Self.serverRequest(
                    request.method, request.url, headers: request.headers, body: request.body,
                    from: "192.0.2.23")))
    }

    /// Opens `url` from the subscriber's mobile address as a device would, following redirects
    /// through the API and the carrier; returns the last response.
    func openCheckURL(_ url: String) -> HTTPResponse {
        var current = url
        for _ in 0 ..< 10 {
            let request = Self.serverRequest("GET", current, from: OneSubscriber.address)
            let response = current.contains("://mno.carrier.test") ? carrier.handle(request) : api.handle(request)
            guard (300 ..< 400).contains(response.status), let location = response.headers["Location"] else {
                return response
            }
            current =
                location.contains("://")
                ? location : String(current.prefix { $0 != "/" }) + "//" + Self.host(of: current) + location
        }
        return HTTPResponse(status: 0)
    }

    static func host(of url: String) -> String {
        String(url.split(separator: "/", omittingEmptySubsequences: false)[2])
    }

    static func answer(_ status: Int, _ body: String, headers: [HTTPHeader] = []) -> HTTPClientResponse {
        clientResponse(
            HTTPResponse(
                status: status, contentType: "application/problem+json", body: body,
                headers: HTTPHeaders(headers.map { (name: $0.name, value: $0.value) })))
    }

    static func serverRequest(
        _ method: String, _ url: String, headers: [HTTPHeader] = [], body: [UInt8]? = nil,
        from address: String
    ) -> HTTPRequest {
        let afterScheme = url[url.firstRange(of: "://")!.upperBound...]
        let target = afterScheme[(afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex)...]
        let parts = target.split(separator: "?", maxSplits: 1).map(String.init)
        let items = (parts.count > 1 ? parts[1] : "").split(separator: "&").map { pair in
            let kv = pair.split(separator: "=", maxSplits: 1).map { percentDecoded(String($0)) }
            return HTTPQueryItem(name: kv[0], value: kv.count > 1 ? kv[1] : nil)
        }
        return HTTPRequest(
            method: method, path: parts.first ?? "/", queryItems: items,
            headers: HTTPHeaders(headers.map { (name: $0.name, value: $0.value) }), body: body ?? [],
            remoteAddress: address, isTLS: url.hasPrefix("https://"))
    }

    static func clientResponse(_ response: HTTPResponse) -> HTTPClientResponse {
        let headers = response.headers.map { HTTPHeader($0.name, $0.value) }
        let trace = HopTrace(
            index: 1, method: "GET", url: "", status: response.status, location: nil, remoteAddress: "203.0.113.10",
            remotePort: 443, localAddress: "192.0.2.23", localPort: 40000, connectionReused: false, tlsVersion: nil,
            httpVersion: "1.1", timings: HopTimings(dnsMs: 0, connectMs: nil, tlsMs: nil, firstByteMs: 0, totalMs: 0),
            dnsAnswers: nil, responseHeaders: headers, requestHeaders: [], bodyBytes: response.body.count,
            headerBytes: 0,
            downgrade: false, startedAt: 0)
        return HTTPClientResponse(
            status: response.status, headers: headers, body: response.body, bodyTruncated: false,
            contentType: response.headers["Content-Type"], json: JSONValue.parse(response.body), trace: trace)
    }
}

/// `%XX` sequences decoded (no `+`: the services build their URLs with `%20`).
private func percentDecoded(_ text: String) -> String {
    var bytes: [UInt8] = []
    var iterator = Array(text.utf8).makeIterator()
    while let byte = iterator.next() {
        if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
            let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
        {
            bytes.append(value)
        } else {
            bytes.append(byte)
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Values appended from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let stored = Mutex<[Value]>([])
    func append(_ value: Value) { stored.withLock { $0.append(value) } }
    var values: [Value] { stored.withLock { $0 } }
}

/// A client on `transport` that never sleeps between retries, recording the pauses it asked for.
func fakeClient(
    _ transport: FakeAPITransport, retry: RetryPolicy = .default, tokenCache: (any TokenCache)? = nil,
    pauses: Recorder<Duration> = Recorder(), now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
) -> TruAPIClient {
    TruAPIClient(
        endpoint: FakeAPITransport.endpoint, transport: transport, tokenCache: tokenCache, retry: retry,
        timeout: .seconds(5),
        now: now, pause: { pauses.append($0) })
}
