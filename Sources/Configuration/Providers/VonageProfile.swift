import CellpathCore
import SystemSupport

/// The `[vonage]` profile: where Vonage Verify is, the brand its messages name, and the
/// credentials: an application's id and private key (preferred: webhooks need it), else an API
/// key and secret. Printing it never shows a secret or the key.
public struct VonageProfile: Sendable, CustomStringConvertible {
    public enum Credentials: Sendable {
        /// The private key's PEM, read from `vonage.private_key`.
        case application(id: String, privateKeyPEM: [UInt8])
        case apiKey(key: String, secret: String)
    }

    public var apiBase: String
    public var brand: String
    public var credentials: Credentials
    /// Problems that did not stop reading it (a key file others may read).
    public var warnings: [String]

    public var description: String {
        switch credentials {
        case .application(let id, _): "application_id=\(id) private_key=[redacted]"
        case .apiKey(let key, _): "api_key=\(key) api_secret=[redacted]"
        }
    }
}

extension EffectiveConfiguration {
    /// The Vonage profile; the private key is read with `identity`'s rights (the caller's, for
    /// a privileged process). A `.configuration` error names what is missing.
    public func requireVonageProfile(as identity: FileIdentity?) throws(CellpathError) -> VonageProfile {
        let provider = "vonage"
        let apiBase = try require(.vonageAPIBase, for: provider)
        let brand = try require(.vonageBrand, for: provider)
        if let applicationID = try value(of: .vonageApplicationID) {
            let path = try require(.vonagePrivateKey, for: provider)
            let origin = origin(of: Setting.vonagePrivateKey.name) ?? .builtIn
            let (pem, mode) = try TruJSONFile.readSecretFile(
                path, namedBy: origin, as: identity, hint: "give the application's private key file (PEM)")
            let warnings =
                mode & 0o077 == 0
                ? [] : ["\(path) holds a private key but others may read it; run 'chmod 600 \(path)'"]
            return VonageProfile(
                apiBase: apiBase, brand: brand, credentials: .application(id: applicationID, privateKeyPEM: pem),
                warnings: warnings)
        }
        guard let key = try value(of: .vonageAPIKey) else {
            throw CellpathError(
                .configuration, "no Vonage credentials configured for --provider vonage",
                hint: "set [vonage] application_id and private_key (or api_key and api_secret) in the configuration "
                    + "file, or CELLPATH_VONAGE_APPLICATION_ID and CELLPATH_VONAGE_PRIVATE_KEY")
        }
        return VonageProfile(
            apiBase: apiBase, brand: brand,
            credentials: .apiKey(key: key, secret: try require(.vonageAPISecret, for: provider)), warnings: [])
    }
}
