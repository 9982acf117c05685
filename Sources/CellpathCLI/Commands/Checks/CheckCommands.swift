import CellpathCore
import CommandLineKit
import Workflow

/// `cellpath subscriber-check | phone-check | sim-check | coverage`: the checks from the device,
/// against a development server (`--server`, or the profile's) or the tru.ID API (`--direct`).
/// They run in `cellpath-helper`, which links the modem layer and libphonenumber (implemented in
/// Sources/CheckCommands).
package enum CheckCommands {
    package static let subscriberCheck = spec(
        "subscriber-check", product: .subscriberCheck,
        abstract:
            "Check that a phone number is this SIM's, and that the SIM did not change recently (SubscriberCheck).",
        discussion: """
            Creates a SubscriberCheck on the backend while the modem's bearer comes up, opens its
            check_url once through the cellular interface only (every hop and DNS query), completes it,
            and prints whether the number matched and whether the SIM changed. The exit code is the
            verdict: 0 verified, 1 not verified, 2 verified but the SIM changed within the period.
            A bearer this command brought up is taken down at the end (--keep-bearer keeps it).
            """,
        examples: [
            .init(
                "Check the SIM's own number through your development server:",
                "cellpath subscriber-check --server http://localhost:8080"),
            .init(
                "Check a number with the tru.ID API directly (your project's credentials):",
                "cellpath subscriber-check +44 7940 448591 --direct"),
            .init(
                "A field run with the tru.ID API: 10 checks, a JSON line each with its GNSS fix:",
                "cellpath subscriber-check --repeat 10 --location --direct --json")
        ])
    package static let phoneCheck = spec(
        "phone-check", product: .phoneCheck,
        abstract: "Check that a phone number is this SIM's (PhoneCheck).",
        discussion: """
            As subscriber-check, without the SIM-change fields. Exit 0 verified, 1 not verified.
            """,
        examples: [
            .init(
                "Check a national number, read in its country:",
                "cellpath phone-check 07940 448591 --region GB --direct"),
            .init("Check the SIM's own number with the v0.1 flow:", "cellpath phone-check --api-version v0.1 --direct"),
            .init("Check on the second modem:", "cellpath phone-check -m 1 --direct")
        ])

    package static let simCheck = CommandSpec(
        name: "sim-check",
        abstract: "Ask whether the SIM of a phone number changed recently (SIMCheck; no device leg).",
        discussion: """
            One call to the backend, over the default network. Exit 0 when the SIM did not change
            within the period, 2 when it did.
            """,
        options: SIMCheckOptions.self,
        placement: .program(.helper),
        examples: [
            .init(
                "Ask your development server whether the SIM changed recently:",
                "cellpath sim-check +447940448591 --server http://localhost:8080"),
            .init("Ask the tru.ID API, with a national number:", "cellpath sim-check 07940 448591 --region GB --direct")
        ])

    package static let coverage = CommandSpec(
        name: "coverage",
        abstract:
            "Ask the tru.ID API, through the cellular path, which network the device is on and which checks it supports.",
        discussion: """
            Gets a token with the coverage scope from the backend (over the default network), then asks
            the API's device_ip endpoint through the cellular interface only: the API answers for the
            address the operator gave the bearer. Exit 69 when the address is not a mobile one.
            """,
        options: CoverageOptions.self,
        placement: .program(.helper),
        examples: [
            .init(
                "Ask which network the only modem is on, and which checks it supports:", "cellpath coverage --direct"),
            .init(
                "The same for the second modem, through your development server:",
                "cellpath coverage -m 1 --server http://localhost:8080"),
            .init("As JSON:", "cellpath coverage --direct --json")
        ])

    /// `--api-version`: the check flow.
    package static let apiVersion = Option<APIVersion>(
        wrappedValue: .v0_2, "api-version", "version",
        help: "The check flow: v0.2 (the chain ends with a code that the backend exchanges) or v0.1 (default: v0.2).",
        ValueConversion { text throws(InvalidOptionValue) in
            guard let version = APIVersion(rawValue: text) else {
                throw InvalidOptionValue(expectation: "v0.1 or v0.2")
            }
            return version
        })
    /// `-m/--modem` of the checks: also `all`.
    package static let modem = Option<String?>(
        "modem", short: "m", "modem",
        help: """
            The modem: its index, IMEI, ICCID or control port, or 'all' (each modem in parallel, with its own bearer). \
            Default: the only modem.
            """, ValueConversion.text.completed(as: .modems(includingAll: true)))
    package static let allowDowngrade = Flag(
        "allow-downgrade",
        help: """
            Go on when the chain returns to plain http with the check's code or assertion, or to a host it reached \
            over https (refused by default; a warning, even with -q).
            """)

    /// The spec of a check with a device leg.
    private static func spec(
        _ name: String, product: CheckProduct, abstract: String, discussion: String,
        examples: [CommandExample]
    ) -> CommandSpec {
        CommandSpec(
            name: name, abstract: abstract, discussion: discussion,
            options: DeviceCheckOptions.self,
            placement: .program(.helper),
            examples: examples)
    }
}

/// The options of `subscriber-check` and `phone-check`: the number, the backend, the check, the
/// path (a modem's bearer or an interface), the chain, field mode.
package struct DeviceCheckOptions: CommandOptions {
    @OptionalArgument(
        "phone",
        help: """
            The phone number to check: international (+44…), national with --region, or a tel: URI; its groups may be \
            separate words. Default: the number the modem's SIM holds.
            """,
        joiningWords: true)
    package var phone: String?
    @OptionGroup package var backend: CheckBackendOptions
    @Option(CheckCommands.apiVersion) package var apiVersion: APIVersion
    @SettingOption(.profile) package var profile: String?
    @OptionGroup package var api: TruAPIOptions
    @Option(
        "reference-id", "id",
        help: "Your own id for the check, echoed in its result.") package var referenceID: String?
    @Option(
        "redirect-url", "url",
        help: "v0.2: the app URL the chain ends at; cellpath stops there and reads the code from it.")
    package var redirectURL: String?
    @SettingOption(.region) package var region: String?
    @Option(
        "operator-override", "mcc-mnc",
        help: "Send this network as x-tru-ops instead of the serving network (MCC-MNC).")
    package var operatorOverride: String?
    @Option(CheckCommands.modem) package var modem: String?
    @OptionGroup package var modemPath: ModemPathOptions
    @OptionGroup package var interfacePath: InterfacePathOptions
    @Flag(CheckCommands.allowDowngrade) package var allowDowngrade: Bool
    @Option(FetchCommand.maxHops) package var maxHops: Int
    @SettingOption(.hopTimeout) package var hopTimeout: String?
    @SettingOption(.timeout) package var timeout: String?
    @SettingOption(.caFile) package var caFile: String?
    @OptionGroup package var field: FieldOptions
    @Flag(
        "location",
        help: """
            Read the modem's GNSS fix beside each check and record it as the check's position (--position's \
            where there is no fix).
            """)
    package var location: Bool

    package init() {}
}

/// The options of `sim-check`: the number, the backend, field mode.
package struct SIMCheckOptions: CommandOptions {
    @Argument(
        "phone",
        help: """
            The phone number to check: international (+44…), national with --region, or a tel: URI; its groups may be \
            separate words.
            """,
        joiningWords: true)
    package var phone: String
    @OptionGroup package var backend: CheckBackendOptions
    @Option(CheckCommands.apiVersion) package var apiVersion: APIVersion
    @SettingOption(.profile) package var profile: String?
    @OptionGroup package var api: TruAPIOptions
    @SettingOption(.region) package var region: String?
    @SettingOption(.timeout) package var timeout: String?
    @OptionGroup package var field: FieldOptions

    package init() {}
}

/// The options of `coverage`: the backend, the path, the chain.
package struct CoverageOptions: CommandOptions {
    @OptionGroup package var backend: CheckBackendOptions
    @SettingOption(.profile) package var profile: String?
    @OptionGroup package var api: TruAPIOptions
    @Option(CheckCommands.modem) package var modem: String?
    @OptionGroup package var modemPath: ModemPathOptions
    @OptionGroup package var interfacePath: InterfacePathOptions
    @Flag(CheckCommands.allowDowngrade) package var allowDowngrade: Bool
    @SettingOption(.hopTimeout) package var hopTimeout: String?
    @SettingOption(.timeout) package var timeout: String?
    @SettingOption(.caFile) package var caFile: String?

    package init() {}
}
