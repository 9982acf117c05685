import COpenSSL
import CellpathCore

/// An RSA public key from a JSON Web Key (`kty: RSA`, base64url `n` and `e`), verifying
/// RSASSA-PKCS1-v1_5 SHA-256 signatures with OpenSSL's libcrypto. Any thread.
struct RSAPublicKey: Sendable, Equatable {
    let modulus: [UInt8]
    let exponent: [UInt8]

    /// The key of `jwk`, or nil when it is not an RSA key with a modulus of 2048 to 8192 bits.
    init?(jwk: JSONValue) {
        guard jwk[string: "kty"] == "RSA", let n = jwk[string: "n"].flatMap(Base64URL.decode),
            let e = jwk[string: "e"].flatMap(Base64URL.decode), !e.isEmpty,
            (256 ... 1024).contains(n.drop { $0 == 0 }.count)
        else { return nil }
        modulus = n
        exponent = e
    }

    /// Whether `signature` is this key's RSA-SHA256 signature of `data`.
    func verifies(_ signature: [UInt8], of data: [UInt8]) -> Bool {
        guard let builder = OSSL_PARAM_BLD_new() else { return false }
        defer { OSSL_PARAM_BLD_free(builder) }
        let n = BN_bin2bn(modulus, Int32(modulus.count), nil), e = BN_bin2bn(exponent, Int32(exponent.count), nil)
        defer { BN_free(n); BN_free(e) }
        // The parameters point at their names, not copies: the names must live until the key is made.
        let nName = strdup("n"), eName = strdup("e")
        defer { free(nName); free(eName) }
        guard OSSL_PARAM_BLD_push_BN(builder, nName, n) == 1, OSSL_PARAM_BLD_push_BN(builder, eName, e) == 1,
            let parameters = OSSL_PARAM_BLD_to_param(builder)
        else { return false }
        defer { OSSL_PARAM_free(parameters) }
        guard let keyContext = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { return false }
        defer { EVP_PKEY_CTX_free(keyContext) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(keyContext) == 1,
            EVP_PKEY_fromdata(keyContext, &key, Int32(OSSL_KEYMGMT_SELECT_PUBLIC_KEY), parameters) == 1, let key
        else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        return EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1
            && EVP_DigestVerify(context, signature, signature.count, data, data.count) == 1
    }
}
