import CellpathCore
import CellpathCrypto
import Glibc
import HTTPServer

/// Verifies tru.ID webhooks as the dev-server does (`http-signature` + `jwks-rsa`): the HTTP
/// Signature (draft-cavage, `rsa-sha256`, in `Authorization: Signature …` or a `Signature` header)
/// must cover `(request-target)`, `host`, `date` and `digest`, its `keyId` must be a key of the
/// API's JWK Set (fetched once and cached; fetched again when a `keyId` is unknown, at most once
/// every `refetchInterval`), `Digest` must be the body's SHA-256 and `Date` within `maxClockSkew`.
/// A signature is accepted once: a webhook sent again within the `Date` window is a replay.
actor WebhookVerifier {
    /// Fetches the JWK Set's JSON (`{base}/.well-known/jwks.json`); nil when it cannot be had.
    typealias KeySetSource = @Sendable () async -> JSONValue?

    /// The headers a signature must cover.
    static let requiredSignedHeaders: Set<String> = ["(request-target)", "host", "date", "digest"]

    private let fetchKeySet: KeySetSource
    private let maxClockSkew: Double
    private let refetchInterval: Duration
    private var keys: [String: RSAPublicKey] = [:]
    private var lastFetch: ContinuousClock.Instant?
    private var accepted: AcceptedSignatures

    /// `maxReplayEntries`: the accepted signatures remembered while their `Date` is in the window.
    init(
        maxClockSkew: Double = 300, refetchInterval: Duration = .seconds(10), maxReplayEntries: Int = 10_000,
        fetchKeySet: @escaping KeySetSource
    ) {
        self.fetchKeySet = fetchKeySet
        self.maxClockSkew = maxClockSkew
        self.refetchInterval = refetchInterval
        accepted = AcceptedSignatures(capacity: maxReplayEntries)
    }

    /// Why the webhook does not verify, or nil when it does. `target`: the request's path and
    /// query as sent; `now`: seconds since 1970.
    func problem(method: String, target: String, headers: HTTPHeaders, body: [UInt8], now: Double) async -> String? {
        guard
            let text = headers["Authorization"].flatMap({ $0.hasPrefix("Signature ") ? String($0.dropFirst(10)) : nil })
                ?? headers["Signature"]
        else { return "no signature" }
        let parameters = Self.parameters(text)
        guard parameters["algorithm"] == nil || parameters["algorithm"] == "rsa-sha256" else {
            return "unsupported algorithm"
        }
        guard let keyID = parameters["keyId"],
            let signature = parameters["signature"].flatMap(Base64.decode)
        else {
            return "incomplete signature parameters"
        }
        let signed = (parameters["headers"] ?? "date").lowercased().split(separator: " ").map(String.init)
        guard Self.requiredSignedHeaders.isSubset(of: signed) else {
            return "the signature does not cover (request-target), host, date and digest"
        }
        guard let date = headers["Date"].flatMap(Self.httpDate), abs(date - now) <= maxClockSkew else {
            return "stale or missing Date"
        }
        guard headers["Digest"] == "SHA-256=" + Base64.encode(Digest.sha256(body)) else {
            return "Digest does not match the body"
        }
        var lines: [String] = []
        for name in signed {
            if name == "(request-target)" {
                lines.append("(request-target): \(method.lowercased()) \(target)")
            } else {
                guard let value = headers[name] else { return "missing signed header \(name)" }
                lines.append("\(name): \(value)")
            }
        }
        guard let key = await key(keyID) else { return "unknown keyId" }
        guard key.verifies(Array(signature), of: Array(lines.joined(separator: "\n").utf8)) else {
            return "bad signature"
        }
        // No suspension point from here on: a replay racing the original cannot slip in between.
        guard accepted.insert(Array(signature), until: date + maxClockSkew, now: now) else {
            return "replayed (this signature was already accepted)"
        }
        return nil
    }

    /// The key `keyID`, fetching the key set when it is not known yet.
    private func key(_ keyID: String) async -> RSAPublicKey? {
        if let key = keys[keyID] { return key }
        if let lastFetch, lastFetch.duration(to: .now) < refetchInterval { return nil }
        lastFetch = .now
        guard let set = await fetchKeySet(), let entries = set["keys"]?.arrayValue else { return nil }
        var fetched: [String: RSAPublicKey] = [:]
        for entry in entries {
            if let kid = entry[string: "kid"], let key = RSAPublicKey(jwk: entry) { fetched[kid] = key }
        }
        if !fetched.isEmpty { keys = fetched }
        return keys[keyID]
    }

    /// `name="value"` pairs of a signature header (values hold no quotes or commas but base64's).
    static func parameters(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for piece in text.split(separator: ",") {
            let pair = piece.split(separator: "=", maxSplits: 1).map { String($0.drop { $0 == " " }) }
            guard pair.count == 2, pair[1].count >= 2, pair[1].hasPrefix("\""), pair[1].hasSuffix("\"") else {
                continue
            }
            result[pair[0]] = String(pair[1].dropFirst().dropLast())
        }
        return result
    }

    /// An IMF-fixdate (`Mon, 21 Sep 2026 14:13:20 GMT`) as seconds since 1970; nil otherwise.
    static func httpDate(_ text: String) -> Double? {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[5] == "GMT", let day = Int32(fields[1]),
            let month = months.firstIndex(of: String(fields[2])),
            let year = Int32(fields[3])
        else { return nil }
        let time = fields[4].split(separator: ":").compactMap { Int32($0) }
        guard time.count == 3, (1 ... 31).contains(day), (0 ... 23).contains(time[0]), (0 ... 59).contains(time[1]),
            (0 ... 60).contains(time[2])
        else {
            return nil
        }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = Int32(month)
        parts.tm_mday = day
        parts.tm_hour = time[0]
        parts.tm_min = time[1]
        parts.tm_sec = time[2]
        var seconds = timegm(&parts)
        // timegm carries a day that the month does not have into the next month ("31 Feb"): refuse it.
        var check = tm()
        guard gmtime_r(&seconds, &check) != nil, check.tm_mday == day, check.tm_mon == Int32(month) else { return nil }
        return Double(seconds)
    }
}

/// The signatures of accepted webhooks, each kept until its `Date` leaves the window (after
/// which the webhook is refused as stale anyway); at `capacity`, the oldest is forgotten first.
struct AcceptedSignatures {
    let capacity: Int
    private var expiries: [[UInt8]: Double] = [:]
    /// Signatures in the order they were accepted.
    private var order: [[UInt8]] = []
    private var orderStart = 0

    init(capacity: Int) { self.capacity = max(1, capacity) }

    var count: Int { expiries.count }

    /// Records `signature` as accepted until `expiry`; false when it already was (a replay).
    mutating func insert(_ signature: [UInt8], until expiry: Double, now: Double) -> Bool {
        if let known = expiries[signature], known >= now { return false }
        while orderStart < order.count, expiries.count >= capacity || (expiries[order[orderStart]] ?? now) < now {
            expiries.removeValue(forKey: order[orderStart])
            orderStart += 1
        }
        if orderStart > capacity {
            order.removeFirst(orderStart)
            orderStart = 0
        }
        expiries[signature] = expiry
        order.append(signature)
        return true
    }
}
