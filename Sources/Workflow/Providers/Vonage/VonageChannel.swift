/// The channels a Vonage Verify v2 workflow falls back to after `silent_auth`.
public enum VonageChannel: String, Sendable, CaseIterable {
    case sms, whatsapp, voice, email
}
