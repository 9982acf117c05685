/// The tru.ID data residency of a workspace: where its API lives.
public enum DataResidency: String, Sendable, CaseIterable {
    case eu, `in`, us

    /// The tru.ID API base URL for this residency, e.g. `https://eu.api.tru.id`.
    public var apiBaseURL: String { "https://\(rawValue).api.tru.id" }
}

/// A tru.ID project's OAuth2 client credentials. Printing it (description, debug description,
/// `dump`) never shows the secret.
public struct TruIDCredentials: Sendable, Equatable, CustomStringConvertible,
    CustomDebugStringConvertible, CustomReflectable
{
    public var clientID: String
    /// The client secret: send it only to the tru.ID token endpoint, never log it.
    public var clientSecret: String
    public var clientIDOrigin: ConfigurationOrigin
    public var clientSecretOrigin: ConfigurationOrigin

    public init(
        clientID: String, clientSecret: String,
        clientIDOrigin: ConfigurationOrigin, clientSecretOrigin: ConfigurationOrigin
    ) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.clientIDOrigin = clientIDOrigin
        self.clientSecretOrigin = clientSecretOrigin
    }

    public var description: String { "client_id=\(clientID) client_secret=[redacted]" }
    public var debugDescription: String { "TruIDCredentials(\(description))" }
    public var customMirror: Mirror {
        Mirror(self, children: ["clientID": clientID, "clientSecret": "[redacted]"])
    }
}
