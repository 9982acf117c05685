import COpenSSL

/// Message digests over OpenSSL's libcrypto: the one SHA-256 of the webhook signer (the simulated
/// API), the webhook verifier (`serve`), PKCE and hashed phone numbers (CAMARA). Any thread.
public enum Digest {
    /// The SHA-256 of `data` (32 bytes); empty only if libcrypto fails.
    public static func sha256(_ data: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_Digest(data, data.count, &digest, &length, EVP_sha256(), nil) == 1 else { return [] }
        return Array(digest.prefix(Int(length)))
    }

    /// The SHA-256 of `text`'s UTF-8 in lower-case hex (64 digits): CAMARA's `hashedPhoneNumber`.
    public static func sha256Hex(_ text: String) -> String {
        sha256(Array(text.utf8)).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
