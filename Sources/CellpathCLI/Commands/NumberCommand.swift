import CellpathCore
import PhoneNumbers

/// `cellpath number PHONE [--region CC]`: parses, normalises and validates a phone number.
enum NumberCommand {
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
        action: .async(run))

    static let phone = ArgumentKey("phone", help: "The phone number, in international or national form, or a tel: URI.")

    static func run(_ parsed: ParsedCommand, _ context: CommandContext) async throws -> CommandOutcome {
        let input = try parsed[Self.phone]
        let configuration = try ConfigurationOptions.load(parsed, context)
        let number = try PhoneNumber.parse(input, defaultRegion: configuration.region)

        var record = Record()
        record.add("e164", .string(number.e164), label: "E.164")
        record.add("e164_digits", .string(number.e164Digits), label: "E.164 digits")
        record.add("international", .string(number.internationalFormat))
        record.add("country_code", .int(number.countryCode))
        record.add("national_number", .string(number.nationalNumber))
        record.add("region", .string(number.regionCode))
        record.add("type", .string(number.type.rawValue))
        record.add("valid", .bool(number.isValid))
        record.add("mobile", .bool(number.isMobileCapable), label: "mobile capable")

        if !number.isMobileCapable {
            context.logger.warning("this is a \(number.type.words) number: SubscriberCheck needs a mobile number (checks refuse it unless --allow-non-mobile)")
        }
        let kind = number.isMobileCapable ? "mobile" : number.type.words
        return CommandOutcome(Output(title: "\(number.internationalFormat): valid \(kind) number (\(number.regionCode))", record))
    }
}
