import CellpathCore

/// The `[twilio]` profile: where Twilio Verify is and the account and service that call it.
/// Printing it never shows the auth token.
public struct TwilioProfile: Sendable, CustomStringConvertible {
    public var apiBase: String
    public var accountSID: String
    /// Send it only to Twilio's API, never log it.
    public var authToken: String
    public var serviceSID: String

    public var description: String { "account_sid=\(accountSID) service_sid=\(serviceSID) auth_token=[redacted]" }
}

extension EffectiveConfiguration {
    /// The Twilio profile, or a `.configuration` error naming the first missing key.
    public func requireTwilioProfile() throws(CellpathError) -> TwilioProfile {
        let provider = "twilio"
        return TwilioProfile(
            apiBase: try require(.twilioAPIBase, for: provider),
            accountSID: try require(.twilioAccountSID, for: provider),
            authToken: try require(.twilioAuthToken, for: provider),
            serviceSID: try require(.twilioServiceSID, for: provider))
    }
}
