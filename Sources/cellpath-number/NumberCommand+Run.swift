import CellpathCLI
import CellpathCore
import PhoneNumbers

extension NumberCommand {
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
