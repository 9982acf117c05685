/// Compact JWTs (RFC 7519, JWS compact serialization), the signature made and checked by the
/// caller's key: Vonage's application JWTs (the front, without libcrypto, injects its signer),
/// CAMARA's `private_key_jwt` assertions (`CellpathCrypto` adds `JWSKey` overloads) and the
/// simulated APIs' checks of both.
public enum CompactJWT {
    /// `header.claims.signature`, the header `{alg: algorithm, typ: JWT[, kid]}`; nil when
    /// `sign` fails.
    public static func sign(
        claims: JSONValue, algorithm: String, keyID: String? = nil, with sign: ([UInt8]) -> [UInt8]?
    ) -> String? {
        var header: [(String, JSONValue)] = [("alg", .string(algorithm)), ("typ", .string("JWT"))]
        if let keyID { header.append(("kid", .string(keyID))) }
        let input =
            Base64URL.encode(Array(JSONValue.object(header).serialized.utf8)) + "."
            + Base64URL.encode(Array(claims.serialized.utf8))
        return sign(Array(input.utf8)).map { input + "." + Base64URL.encode($0) }
    }

    /// The claims of `token` when its header names `algorithm` and `verify(signature, input)`
    /// accepts its signature; nil otherwise. The claims themselves (exp, aud, …) are the
    /// caller's to check.
    public static func verifiedClaims(
        of token: String, algorithm: String, verify: (_ signature: [UInt8], _ input: [UInt8]) -> Bool
    ) -> JSONValue? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let header = JSONValue.parse(headerBytes), header[string: "alg"] == algorithm,
            let signature = Base64URL.decode(parts[2]),
            verify(signature, Array((parts[0] + "." + parts[1]).utf8)),
            let claims = Base64URL.decode(parts[1]).flatMap(JSONValue.parse)
        else { return nil }
        return claims
    }
}
