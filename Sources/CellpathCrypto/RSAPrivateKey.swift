import COpenSSL
import CellpathCore

/// An RSA private key read from PEM, signing RSASSA-PKCS1-v1_5 with SHA-256 (RS256): the one
/// RSA signer of the simulated API's webhooks and of Vonage's application JWTs (and the fake
/// Vonage API's check of them). Any thread.
public final class RSAPrivateKey: @unchecked Sendable {
    private let key: OpaquePointer
    /// The public modulus and exponent, big-endian (as a JSON Web Key writes them).
    public let modulus: [UInt8]
    public let exponent: [UInt8]

    /// Reads a PEM private key (PKCS#1 or PKCS#8); `what` names it in errors.
    public init(pem: [UInt8], what: String) throws(CellpathError) {
        // The BIO reads the bytes in place: it must not outlive the buffer's scope (an optimised
        // build frees the array after its last use).
        let read: OpaquePointer?? = pem.withUnsafeBytes { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return .none }
            defer { BIO_free(bio) }
            return .some(PEM_read_bio_PrivateKey(bio, nil, nil, nil))
        }
        guard let read else { throw CellpathError(.internalError, "\(what): out of memory") }
        guard let key = read else {
            throw CellpathError(.dataError, "\(what): not a PEM private key (\(Self.openSSLError()))")
        }
        guard EVP_PKEY_is_a(key, "RSA") == 1, let n = Self.bigNumber(key, "n"), let e = Self.bigNumber(key, "e") else {
            EVP_PKEY_free(key)
            throw CellpathError(.dataError, "\(what): must be an RSA private key")
        }
        self.key = key
        modulus = n
        exponent = e
    }

    deinit { EVP_PKEY_free(key) }

    /// The RS256 signature of `data`; empty only if libcrypto fails.
    public func signSHA256(_ data: [UInt8]) -> [UInt8] {
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

    /// Whether `signature` is this key's RS256 signature of `data` (checked with its public half).
    public func verifySHA256(_ data: [UInt8], signature: [UInt8]) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        return EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1
            && EVP_DigestVerify(context, signature, signature.count, data, data.count) == 1
    }

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
