import CellpathCore
import FoundationEssentials
import HTTPServer
import SimulatedServices
import SimulatorScenario
import Synchronization

/// A subscriber directory with fixed bearer addresses.
struct FakeDirectory: SubscriberDirectory {
    var byAddress: [String: (SimulatedSIM, SimulatedNetwork)]

    func subscriber(holding address: String) -> SimulatedSIM? { byAddress[address]?.0 }
    func subscriber(msisdn: String) -> SimulatedSIM? { byAddress.values.first { $0.0.msisdn == msisdn }?.0 }
    func network(holding address: String) -> SimulatedNetwork? { byAddress[address]?.1 }
}

/// A clock that moves only when told.
final class ManualClock: Sendable {
    private let current = Mutex(1_790_000_000.0)
    var clock: SimulatorClock { SimulatorClock { self.current.withLock { $0 } } }
    func advance(seconds: Double) { current.withLock { $0 += seconds } }
}

/// One response in a followed chain, with the URL it answered.
struct Hop {
    var url: String
    var response: HTTPResponse
}

/// The simulated world without sockets: the API, the carrier, a device address.
struct TestWorld {
    static let mobileAddress = "100.64.23.2"
    static let wifiAddress = "192.0.2.23"
    static let msisdn = "+447940448591"
    static let clientID = "cp-client"
    static let clientSecret = "cp-secret"

    let clock = ManualClock()
    let api: FakeTruAPI
    let carrier: CarrierIdentificationEndpoint

    /// The second subscriber: a US SIM on operator 310-260 at 100.64.23.9.
    static let otherAddress = "100.64.23.9"
    static let otherNetwork = SimulatedNetwork(mcc: "310", mnc: "260", operatorName: "Other")

    init(
        sim: SimulatedSIM = SimulatedSIM(msisdn: TestWorld.msisdn), network: SimulatedNetwork = SimulatedNetwork(),
        api faults: APIFaults = APIFaults(), carrier carrierFaults: CarrierFaults = CarrierFaults(),
        rateLimit: Int? = 1000,
        webhooks: WebhookDispatch? = nil, retainedChecks: Int = APIFaults.defaultRetainedChecks
    ) {
        let other = SimulatedSIM(msisdn: "+15550001111")
        let directory = FakeDirectory(byAddress: [
            TestWorld.mobileAddress: (sim, network),
            TestWorld.otherAddress: (other, TestWorld.otherNetwork)
        ])
        let modems = [
            SimulatedModem(sim: sim, network: network), SimulatedModem(sim: other, network: TestWorld.otherNetwork)
        ]
        let ledger = SubscriberAssertionLedger()
        api = FakeTruAPI(
            configuration: FakeTruAPIConfiguration(
                clientID: TestWorld.clientID, clientSecret: TestWorld.clientSecret,
                faults: faults, rateLimitPerHour: rateLimit,
                retainedChecks: retainedChecks, modems: modems),
            directory: directory, ledger: ledger, clock: clock.clock, webhooks: webhooks)
        carrier = CarrierIdentificationEndpoint(directory: directory, faults: carrierFaults, ledger: ledger)
    }

    /// Sends `method url` to whichever service owns the URL's host.
    func send(
        _ method: String, _ url: String, headers: HTTPHeaders = [:], body: String = "",
        from address: String = TestWorld.mobileAddress
    ) -> HTTPResponse {
        let request = TestWorld.request(method, url, headers: headers, body: body, from: address)
        return url.contains("://mno.carrier.test") ? carrier.handle(request) : api.handle(request)
    }

    /// Builds a request value from an absolute URL (query decoded as the server would).
    static func request(
        _ method: String, _ url: String, headers: HTTPHeaders = [:], body: String = "",
        from address: String = TestWorld.mobileAddress
    ) -> HTTPRequest {
        let schemeEnd = url.firstRange(of: "://")!
        let afterScheme = url[schemeEnd.upperBound...]
        let pathStart = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        let target = String(afterScheme[pathStart...])
        let (path, query) = target.split(separator: "?", maxSplits: 1).map(String.init).splitPair
        let items = (query ?? "").split(separator: "&").map { pair -> HTTPQueryItem in
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            return HTTPQueryItem(name: decode(kv[0]), value: kv.count > 1 ? decode(kv[1]) : nil)
        }
        return HTTPRequest(
            method: method, path: decode(path), queryItems: items, headers: headers,
            body: Array(body.utf8), remoteAddress: address, isTLS: url.hasPrefix("https://"))
    }

    private static func decode(_ text: String) -> String {
        var bytes: [UInt8] = []
        var i = Array(text.utf8).makeIterator()
        while let b = i.next() {
            if b == UInt8(ascii: "%"), let h = i.next(), let l = i.next(),
                let v = UInt8(String(decoding: [h, l], as: UTF8.self), radix: 16)
            {
                bytes.append(v)
            } else {
                bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A token for `scopes`.
    func token(_ scopes: String = "subscriber_check phone_check sim_check coverage") -> String {
        let basic = Data("\(TestWorld.clientID):\(TestWorld.clientSecret)".utf8).base64EncodedString()
        let response = send(
            "POST", "https://api.truid.test/oauth2/v1/token",
            headers: ["Authorization": "Basic \(basic)", "Content-Type": "application/x-www-form-urlencoded"],
            body: "grant_type=client_credentials&scope=\(scopes.replacingSpaces)")
        return JSONValue.parse(response.body)?["access_token"]?.stringValue ?? "no-token"
    }

    /// Creates a check and returns the response.
    func create(_ path: String, _ json: String, token: String) -> HTTPResponse {
        send(
            "POST", "https://api.truid.test\(path)",
            headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"], body: json)
    }

    /// Follows redirects from `url` like a device would (relative Locations resolved,
    /// cookies kept when `cookies`), up to `limit` requests.
    func follow(
        _ url: String, from address: String = TestWorld.mobileAddress, cookies: Bool = true, limit: Int = 15
    ) -> [Hop] {
        var hops: [Hop] = []
        var current = url
        var jar: [String: String] = [:]
        while hops.count < limit {
            var headers: HTTPHeaders = [:]
            if cookies && !jar.isEmpty {
                headers.add(
                    "Cookie", jar.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
            }
            let response = send("GET", current, headers: headers, from: address)
            hops.append(Hop(url: current, response: response))
            for cookie in response.headers.values(for: "Set-Cookie") {
                let pair = cookie.split(separator: ";")[0].split(separator: "=", maxSplits: 1).map(String.init)
                jar[pair[0]] = pair[1]
            }
            guard (300 ..< 400).contains(response.status), let location = response.headers["Location"] else { break }
            current = TestWorld.resolve(location, against: current)
        }
        return hops
    }

    /// RFC 3986 resolution for the reference forms the services use.
    static func resolve(_ reference: String, against base: String) -> String {
        if reference.contains("://") { return reference }
        let schemeEnd = base.firstRange(of: "://")!
        let origin = base[..<(base[schemeEnd.upperBound...].firstIndex(of: "/") ?? base.endIndex)]
        if reference.hasPrefix("/") { return origin + reference }
        let basePath = String(base.split(separator: "?", maxSplits: 1)[0])
        let directory = basePath[...basePath.lastIndex(of: "/")!]
        return directory + reference
    }
}

extension Array where Element == String {
    var splitPair: (String, String?) { (self.first ?? "", self.count > 1 ? self[1] : nil) }
}

extension String {
    var replacingSpaces: String { split(separator: " ").joined(separator: "%20") }
}

extension HTTPResponse {
    var json: JSONValue? { JSONValue.parse(body) }
}
