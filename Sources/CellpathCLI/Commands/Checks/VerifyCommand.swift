import CellpathCore
import CommandLineKit
import Workflow

/// `cellpath verify [PHONE] --provider truid|twilio|vonage|vonage-nv|camara`: one silent-auth verification of a
/// number with the provider's backend leg and its device SDK's rules on the cellular chain
/// (implemented in Sources/CheckCommands, run by `cellpath-helper`).
package enum VerifyCommand {
    package static let spec = CommandSpec(
        name: "verify",
        abstract:
            "Verify that a phone number is this SIM's with a silent-auth provider (tru.ID, Twilio, Vonage, CAMARA).",
        discussion: """
            Creates a verification with the provider's API (over the default network) while the modem's
            bearer comes up, opens the URL it returned once through the cellular interface only, under the
            provider's device-SDK rules (headers, hop limit and timeout, https only, how the chain ends),
            and completes it. The exit code is the verdict: 0 verified, 1 not verified, 2 verified but the
            SIM changed (tru.ID, and camara or vonage-nv with --sim-swap-within). camara and vonage-nv run Number Verification: the device opens the
            operator's authorize URL, whose redirects end at the profile's redirect_uri (never requested);
            the code it carries is exchanged for a token that asks verify; camara without PHONE asks
            the operator for the device's number instead (device-phone-number). Credentials come from the
            provider's profile in the configuration ([twilio], [vonage], [camara]; docs/configuration.md),
            never from the command line.
            """,
        options: VerifyOptions.self,
        placement: .program(.helper),
        examples: [
            .init("Verify the SIM's own number with Twilio Verify SNA:", "cellpath verify --provider twilio"),
            .init(
                "Verify a number with Vonage, SMS as the fallback:",
                "cellpath verify +447700900123 --provider vonage --fallback sms"),
            .init(
                "With the operator's CAMARA Number Verification, hashed:",
                "cellpath verify +447700900123 --provider camara --hashed")
        ])

    /// `--provider`: which provider's backend and device leg.
    package static let provider = Option<ProviderName>(
        wrappedValue: .truid, "provider", "name",
        help: "The provider: truid (default), twilio, vonage, vonage-nv or camara.", .choice)
}

/// The options of `verify`: the provider, Vonage's fallbacks, and those of `subscriber-check`
/// (the number, tru.ID's backend, the path, the chain, field mode).
package struct VerifyOptions: CommandOptions {
    @Option(VerifyCommand.provider) package var provider: ProviderName
    @RepeatableOption(
        "fallback", "channel",
        help:
            "vonage: a channel the verification falls back to after silent auth (sms, whatsapp, voice, email); repeatable, at most 2.",
        .choice)
    package var fallbacks: [VonageChannel]
    @Flag(
        "hashed",
        help: "camara, vonage-nv: send the number as hashedPhoneNumber (its SHA-256), not in clear.")
    package var hashed: Bool
    @Option(
        "sim-swap-within", "hours",
        help:
            "camara, vonage-nv: also ask SIM Swap whether a verified number's SIM changed within these hours (1 to 2400): exit 2 if it did.",
        .integer(in: 1 ... 2400))
    package var simSwapWithin: Int?
    @OptionGroup package var check: DeviceCheckOptions

    package init() {}
}
