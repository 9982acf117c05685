import CommandLineKit

/// `cellpath number PHONE [--region CC]`: parses, normalises and validates a phone number.
/// Runs in `cellpath-helper` (implemented in Sources/NumberCommands), the executable that links libphonenumber.
package enum NumberCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "number",
        abstract: "Parse and validate a phone number, and print it in E.164.",
        discussion: """
            Accepts international numbers (+44 7940 448591, 0044 7940 448591), national numbers with
            a region (07940 448591 --region GB) and tel: URIs, in the digits of any one script. The
            digits are never rewritten: a trunk prefix after the country code (+44 07940 448591) is
            refused unless written as (0) or --region names that country, and an extension (ext. 123)
            is refused, since a SIM's number has none. Other failures say why; all exit with 65.
            SubscriberCheck and PhoneCheck need a mobile number: another type gets a warning.
            """,
        options: Options.self,
        placement: .program(.helper),
        examples: [
            .init("Check an international number and print it in E.164:", "cellpath number +44 7940 448591"),
            .init("Read a national number in its country:", "cellpath number 07940 448591 --region GB"),
            .init("A tel: URI, as JSON:", "cellpath number tel:+44-7940-448591 --json")
        ])

    /// `number`'s options.
    package struct Options: CommandOptions {
        @Argument(
            "phone",
            help: """
                The phone number, in international or national form, or a tel: URI; its groups may be separate words \
                (07940 448591).
                """,
            joiningWords: true)
        package var phone: String
        @SettingOption(.region) package var region: String?

        package init() {}
    }
}
