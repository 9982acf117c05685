import CellpathCore
import CellpathCrypto
import Glibc
import HTTPServer

/// One webhook, signed and ready to be POSTed to `url`.
public struct SignedWebhook: Sendable, Equatable {
    public var url: String
    /// Where to connect and what to ask for: `url`'s host, port (80 unless given) and path with query.
    public var host: String
    public var port: UInt16
    public var pathAndQuery: String
    /// Host, Date, Content-Type, Digest, x-tru-callback, Authorization and Signature.
    public var headers: HTTPHeaders
    public var body: [UInt8]
}

/// The fake API's webhook key: an RSA private key that signs webhooks as tru.ID does (HTTP
/// Signatures, draft-cavage, `rsa-sha256` over `(request-target) host date x-tru-callback digest`)
/// and publishes its public half as a JSON Web Key. Safe from any thread: OpenSSL 3 signs
/// concurrently with one key, each call with its own context.
public final class WebhookSigner: @unchecked Sendable {
    /// The headers every signature covers, in order.
    public static let signedHeaders = ["(request-target)", "host", "date", "x-tru-callback", "digest"]

    private let key: JWSKey
    /// The key's RFC 7638 thumbprint (base64url), the signatures' `keyId` and the JWK's `kid`.
    public let keyID: String
    /// The public key as a JWK: `{kty: RSA, use: sig, alg: RS256, kid, n, e}`.
    public let publicJWK: JSONValue

    /// Reads an RSA private key in PEM. Throws `.dataError` for anything else.
    public init(privateKeyPEM: [UInt8]) throws(CellpathError) {
        key = try JWSKey.rsa(pem: privateKeyPEM, what: "webhook key")
        let (n, e) = (key.modulus, key.exponent)
        let (modulus, exponent) = (Base64URL.encode(n), Base64URL.encode(e))
        // RFC 7638: SHA-256 of the required members in lexicographic order, without spaces.
        let canonical = #"{"e":"\#(exponent)","kty":"RSA","n":"\#(modulus)"}"#
        keyID = Base64URL.encode(Digest.sha256(Array(canonical.utf8)))
        publicJWK = .object([
            ("kty", .string("RSA")), ("use", .string("sig")), ("alg", .string("RS256")),
            ("kid", .string(keyID)), ("n", .string(modulus)), ("e", .string(exponent))
        ])
    }

    /// The JWK Set published at `/.well-known/jwks.json`.
    public var keySet: JSONValue { .object([("keys", .array([publicJWK]))]) }

    /// A webhook POST of `body` (JSON) to `url` (`http://host[:port]/path`) for `product`
    /// (`x-tru-callback`: `phone_check` or `subscriber_check`), dated `date`; nil when `url` has no host.
    public func webhook(to url: String, product: String, body: [UInt8], date: Double) -> SignedWebhook? {
        guard let target = HTTPTarget(url) else { return nil }
        let digest = "SHA-256=" + Base64.encode(Digest.sha256(body))
        let values = [
            "(request-target)": "post \(target.pathAndQuery)", "host": target.authority,
            "date": Self.httpDate(date), "x-tru-callback": product, "digest": digest
        ]
        let signingString = Self.signedHeaders.map { "\($0): \(values[$0]!)" }.joined(separator: "\n")
        let signature = Base64.encode(sign(Array(signingString.utf8)))
        let parameters =
            #"keyId="\#(keyID)",algorithm="rsa-sha256",headers="\#(Self.signedHeaders.joined(separator: " "))","#
            + #"signature="\#(signature)""#
        let headers: HTTPHeaders = [
            "Host": target.authority, "Date": values["date"]!, "Content-Type": "application/json",
            "Digest": digest, "x-tru-callback": product,
            "Authorization": "Signature \(parameters)", "Signature": parameters
        ]
        return SignedWebhook(
            url: url, host: target.host, port: target.port, pathAndQuery: target.pathAndQuery,
            headers: headers, body: body)
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256 over `data`.
    func sign(_ data: [UInt8]) -> [UInt8] { key.sign(data) ?? [] }

    static func httpDate(_ date: Double) -> String {
        var seconds = time_t(date.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

}

/// The parts of an `http://` URL a webhook needs.
struct HTTPTarget: Sendable, Equatable {
    /// `host[:port]` as written.
    var authority: String
    var host: String
    var port: UInt16
    /// The path (at least `/`) and query.
    var pathAndQuery: String

    init?(_ url: String) {
        guard url.hasPrefix("http://") else { return nil }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var target = String(rest.dropFirst(authority.count).prefix { $0 != "#" })
        if !target.hasPrefix("/") { target = "/" + target }
        let pieces = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let host = pieces.first, !host.isEmpty else { return nil }
        if pieces.count == 2 {
            guard let port = UInt16(pieces[1]), port > 0 else { return nil }
            self.port = port
        } else {
            port = 80
        }
        self.authority = String(authority)
        self.host = String(host)
        pathAndQuery = target
    }
}
