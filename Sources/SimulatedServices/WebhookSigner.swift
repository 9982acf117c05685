import COpenSSL
import CellpathCore
import CellpathCrypto
import FoundationEssentials
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

    /// The `EVP_PKEY` (an RSA private key), owned.
    private let key: OpaquePointer
    /// The key's RFC 7638 thumbprint (base64url), the signatures' `keyId` and the JWK's `kid`.
    public let keyID: String
    /// The public key as a JWK: `{kty: RSA, use: sig, alg: RS256, kid, n, e}`.
    public let publicJWK: JSONValue

    /// Reads an RSA private key in PEM. Throws `.dataError` for anything else.
    public init(privateKeyPEM: [UInt8]) throws(CellpathError) {
        // The BIO reads the bytes in place: it must not outlive the buffer's scope (an optimised
        // build frees the array after its last use).
        let read: OpaquePointer?? = privateKeyPEM.withUnsafeBytes { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return .none }
            defer { BIO_free(bio) }
            return .some(PEM_read_bio_PrivateKey(bio, nil, nil, nil))
        }
        guard let read else { throw CellpathError(.internalError, "webhook key: out of memory") }
        guard let key = read else {
            throw CellpathError(.dataError, "webhook key: not a PEM private key (\(Self.openSSLError()))")
        }
        guard EVP_PKEY_is_a(key, "RSA") == 1, let n = Self.bigNumber(key, "n"), let e = Self.bigNumber(key, "e") else {
            EVP_PKEY_free(key)
            throw CellpathError(.dataError, "webhook key: must be an RSA private key")
        }
        self.key = key
        let (modulus, exponent) = (Base64URL.encode(n), Base64URL.encode(e))
        // RFC 7638: SHA-256 of the required members in lexicographic order, without spaces.
        let canonical = #"{"e":"\#(exponent)","kty":"RSA","n":"\#(modulus)"}"#
        keyID = Base64URL.encode(Digest.sha256(Array(canonical.utf8)))
        publicJWK = .object([
            ("kty", .string("RSA")), ("use", .string("sig")), ("alg", .string("RS256")),
            ("kid", .string(keyID)), ("n", .string(modulus)), ("e", .string(exponent))
        ])
    }

    deinit { EVP_PKEY_free(key) }

    /// The JWK Set published at `/.well-known/jwks.json`.
    public var keySet: JSONValue { .object([("keys", .array([publicJWK]))]) }

    /// A webhook POST of `body` (JSON) to `url` (`http://host[:port]/path`) for `product`
    /// (`x-tru-callback`: `phone_check` or `subscriber_check`), dated `date`; nil when `url` has no host.
    public func webhook(to url: String, product: String, body: [UInt8], date: Date) -> SignedWebhook? {
        guard let target = HTTPTarget(url) else { return nil }
        let digest = "SHA-256=" + Data(Digest.sha256(body)).base64EncodedString()
        let values = [
            "(request-target)": "post \(target.pathAndQuery)", "host": target.authority,
            "date": Self.httpDate(date), "x-tru-callback": product, "digest": digest
        ]
        let signingString = Self.signedHeaders.map { "\($0): \(values[$0]!)" }.joined(separator: "\n")
        let signature = Data(sign(Array(signingString.utf8))).base64EncodedString()
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
    func sign(_ data: [UInt8]) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { return [] }
        defer { EVP_MD_CTX_free(context) }
        var length = 0
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
            EVP_DigestSign(context, nil, &length, data, data.count) == 1
        else { return [] }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, data, data.count) == 1 else { return [] }
        return Array(signature.prefix(length))
    }

    /// An IMF-fixdate (RFC 9110), e.g. `Tue, 01 Dec 2026 04:41:19 GMT`.
    static func httpDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// The big-endian bytes of the key's integer parameter `name` (`n`, `e`).
    private static func bigNumber(_ key: OpaquePointer, _ name: String) -> [UInt8]? {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { return nil }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(number)) + 7) / 8)
        let written = BN_bn2bin(number, &bytes)
        return Array(bytes.prefix(Int(written)))
    }

    private static func openSSLError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(ERR_get_error(), &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
