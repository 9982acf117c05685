/// `cellpath number PHONE [--region CC]`: parses, normalises and validates a phone number.
/// Runs in `cellpath-number` (Sources/cellpath-number), the executable that links libphonenumber.
package enum NumberCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "number",
        abstract: "Parse and validate a phone number, and print it in E.164.",
        discussion: """
            Accepts international numbers (+44 7940 448591, 0044 7940 448591), national numbers with
            a region (07940 448591 --region GB) and tel: URIs. Digits are never dropped or rewritten.
            SubscriberCheck needs a mobile number: a number of another type gets a warning here, and
            checks refuse it unless --allow-non-mobile.
            """,
        arguments: [phone.spec],
        options: [ConfigurationOptions.region.spec],
        action: .program(.phoneNumbers))

    package static let phone = ArgumentKey("phone", help: "The phone number, in international or national form, or a tel: URI.")
}
