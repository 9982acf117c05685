import CellpathCore
import SystemSupport

/// The `[camara]` profile: an operator's CAMARA APIs, its OpenID provider and this machine's
/// client there, whose private key is in `keyFile` (never on the command line).
public struct CAMARASettings: Sendable, Equatable {
    /// `{apiRoot}` of the API paths.
    public var apiRoot: String
    /// The OpenID provider's issuer (discovery at `{issuer}/.well-known/openid-configuration`).
    public var issuer: String
    public var clientID: String
    /// The client's private key (PEM: RSA 2048+ or EC P-256) for `private_key_jwt`.
    public var keyFile: String
    public var keyFileOrigin: ConfigurationOrigin

    /// The key file's bytes. Refused (`.configuration`) when its group or others may read or
    /// write it, or when it is not a regular file; `.permission` when this user cannot read it.
    public func readKey() throws(CellpathError) -> [UInt8] {
        let hint = "Point [camara] key_file (or CELLPATH_CAMARA_KEY_FILE) at the client's PEM private key."
        let (bytes, mode) = try TruJSONFile.readSecretFile(keyFile, namedBy: keyFileOrigin, as: nil, hint: hint)
        guard mode & 0o077 == 0 else {
            throw CellpathError(
                .configuration, "\(keyFile) (named by \(keyFileOrigin)) holds a private key that others may read",
                hint: "Fix it with chmod 600 \(keyFile).")
        }
        return bytes
    }
}
