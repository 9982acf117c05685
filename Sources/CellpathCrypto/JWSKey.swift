import COpenSSL
import CellpathCore

/// The JWS algorithms of a client assertion (RFC 7518): RSASSA-PKCS1-v1_5 and ECDSA P-256,
/// both over SHA-256.
public enum JWSAlgorithm: String, Sendable, Equatable, CaseIterable {
    case rs256 = "RS256"
    case es256 = "ES256"
}

/// An RSA (2048 bits or more) or P-256 key from PEM, owned; the algorithm follows the key.
/// Safe from any thread: OpenSSL 3 uses one key concurrently, each call with its own context.
public final class JWSKey: @unchecked Sendable {
    /// The `EVP_PKEY`, owned.
    private let key: OpaquePointer
    public let algorithm: JWSAlgorithm
    /// Whether the key holds its private half (it can sign).
    public let isPrivate: Bool
    /// An RSA key's public modulus and exponent, big-endian (as a JSON Web Key writes them);
    /// empty for an EC key.
    public let modulus: [UInt8]
    public let exponent: [UInt8]

    /// Reads a PEM private key (PKCS#8, or traditional RSA/EC) or, with `isPrivate` false, a PEM
    /// public key (SubjectPublicKeyInfo). Throws `.dataError` for anything else; never quotes the key.
    public init(pem: [UInt8], isPrivate: Bool = true) throws(CellpathError) {
        let what = isPrivate ? "private key" : "public key"
        // The BIO reads the bytes in place: it must not outlive the buffer's scope.
        let read: OpaquePointer? = pem.withUnsafeBytes { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            return isPrivate ? PEM_read_bio_PrivateKey(bio, nil, nil, nil) : PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        guard let read else { throw CellpathError(.dataError, "not a PEM \(what)") }
        if EVP_PKEY_is_a(read, "RSA") == 1, EVP_PKEY_get_bits(read) >= 2048 {
            algorithm = .rs256
        } else if EVP_PKEY_is_a(read, "EC") == 1, EVP_PKEY_get_bits(read) == 256 {
            algorithm = .es256
        } else {
            EVP_PKEY_free(read)
            throw CellpathError(.dataError, "the \(what) must be RSA (2048 bits or more) or EC P-256")
        }
        key = read
        self.isPrivate = isPrivate
        modulus = Self.bigNumber(read, "n") ?? []
        exponent = Self.bigNumber(read, "e") ?? []
    }

    /// Reads an RSA private key (2048 bits or more) for RS256; `what` names it in errors.
    public static func rsa(pem: [UInt8], what: String) throws(CellpathError) -> JWSKey {
        let key: JWSKey
        do { key = try JWSKey(pem: pem) } catch { throw CellpathError(.dataError, "\(what): \(error.message)") }
        guard key.algorithm == .rs256 else { throw CellpathError(.dataError, "\(what): must be an RSA private key") }
        return key
    }

    /// An RSA parameter (`n`, `e`) big-endian; nil for other keys.
    private static func bigNumber(_ key: OpaquePointer, _ name: String) -> [UInt8]? {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { return nil }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(number)) + 7) / 8)
        let written = BN_bn2bin(number, &bytes)
        return Array(bytes.prefix(Int(written)))
    }

    deinit { EVP_PKEY_free(key) }

    /// The public half in PEM (SubjectPublicKeyInfo), to register with a server.
    public var publicKeyPEM: [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { return [] }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PUBKEY(bio, key) == 1 else { return [] }
        var pointer: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
        guard length > 0, let pointer else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// The JWS signature of `data` (ES256: `r || s`, 64 bytes); nil for a public key or when
    /// libcrypto fails.
    public func sign(_ data: [UInt8]) -> [UInt8]? {
        guard isPrivate, let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        var length = 0
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
            EVP_DigestSign(context, nil, &length, data, data.count) == 1
        else { return nil }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, data, data.count) == 1 else { return nil }
        let der = Array(signature.prefix(length))
        return algorithm == .es256 ? Self.rawECDSA(der) : der
    }

    /// Whether `signature` (ES256: `r || s`) is this key's signature of `data`.
    public func verifies(_ signature: [UInt8], of data: [UInt8]) -> Bool {
        let encoded: [UInt8]
        switch algorithm {
        case .rs256: encoded = signature
        case .es256:
            guard let der = Self.derECDSA(signature) else { return false }
            encoded = der
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        return EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1
            && EVP_DigestVerify(context, encoded, encoded.count, data, data.count) == 1
    }

    /// A DER ECDSA signature as JWS wants it: `r` and `s`, 32 big-endian bytes each.
    private static func rawECDSA(_ der: [UInt8]) -> [UInt8]? {
        var cursor: UnsafePointer<UInt8>?
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else { return nil }
        defer { ECDSA_SIG_free(parsed) }
        var out = [UInt8](repeating: 0, count: 64)
        guard BN_bn2binpad(ECDSA_SIG_get0_r(parsed), &out, 32) == 32,
            out.withUnsafeMutableBufferPointer({ BN_bn2binpad(ECDSA_SIG_get0_s(parsed), $0.baseAddress! + 32, 32) })
                == 32
        else { return nil }
        return out
    }

    /// `r || s` (64 bytes) as a DER ECDSA signature; nil for any other length.
    private static func derECDSA(_ raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let r = BN_bin2bn(raw, 32, nil)
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r); BN_free(s)
            return nil
        }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &out)
        guard length > 0, let out else { return nil }
        defer { CRYPTO_free(out, nil, 0) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }
}

extension CompactJWT {
    /// A JWT signed with `key`, its algorithm in the header; nil when signing fails.
    public static func sign(claims: JSONValue, with key: JWSKey, keyID: String? = nil) -> String? {
        sign(claims: claims, algorithm: key.algorithm.rawValue, keyID: keyID, with: key.sign)
    }

    /// The claims of `token` when `key` verifies it (its algorithm named in the header).
    public static func verifiedClaims(of token: String, with key: JWSKey) -> JSONValue? {
        verifiedClaims(of: token, algorithm: key.algorithm.rawValue) { key.verifies($0, of: $1) }
    }
}
