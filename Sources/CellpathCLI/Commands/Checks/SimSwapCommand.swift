import CommandLineKit

/// `cellpath sim-swap PHONE`: an operator's CAMARA SIM Swap API, asked over the default network
/// with the `[camara]` profile's client (no device leg, like `sim-check`). Runs in
/// `cellpath-helper` (Sources/CheckCommands/SimSwapCommand+Run.swift).
package enum SimSwapCommand {
    package static let spec = CommandSpec(
        name: "sim-swap",
        abstract: "Ask an operator's CAMARA SIM Swap API whether a number's SIM changed recently (no device leg).",
        discussion: """
            Gets a client-credentials token from the operator's OpenID provider with the [camara]
            profile's client and key (private_key_jwt), then asks SIM Swap's check (swapped within
            --max-age hours) and retrieve-date (when the SIM last changed), over the default network.
            With --provider vonage, Vonage's SIM Swap: a token for the number by CIBA (bc-authorize,
            then the token endpoint with its auth_req_id), the [vonage] application's JWT as the
            client's authentication. Exit 0 when the SIM did not change within --max-age, 2 when it did.
            """,
        options: Options.self,
        placement: .program(.helper),
        examples: [
            .init(
                "Ask the configured operator whether the SIM changed in 10 days:",
                "cellpath sim-swap +447940448591 --provider camara"),
            .init(
                "Within the last 24 hours, as JSON:",
                "cellpath sim-swap +447940448591 --max-age 24 --json"),
            .init("Ask Vonage's SIM Swap, with a CIBA token:", "cellpath sim-swap +447940448591 --provider vonage")
        ])

    /// The network APIs `--provider` names.
    package enum Provider: String, Sendable, CaseIterable {
        case camara, vonage
    }

    /// The options of `sim-swap`.
    package struct Options: CommandOptions {
        @Argument(
            "phone",
            help: """
                The phone number: international (+44…), national with --region, or a tel: URI; its groups may be \
                separate words.
                """,
            joiningWords: true)
        package var phone: String
        @Option(
            wrappedValue: .camara, "provider", "name",
            help: """
                The API to ask: camara, the [camara] profile's operator (default), or vonage, Vonage's SIM Swap \
                with the [vonage] application (a CIBA token for the number).
                """,
            ValueConversion { text throws(InvalidOptionValue) in
                guard let provider = Provider(rawValue: text) else {
                    throw InvalidOptionValue(expectation: "camara or vonage")
                }
                return provider
            })
        package var provider: Provider
        @Option(
            "max-age", "hours",
            help: "The period asked about, in hours from 1 to 2400 (default: the API's, 240).",
            .integer(in: 1 ... 2400))
        package var maxAge: Int?
        @SettingOption(.region) package var region: String?
        @SettingOption(.caFile) package var caFile: String?
        @SettingOption(.timeout) package var timeout: String?

        package init() {}
    }
}
