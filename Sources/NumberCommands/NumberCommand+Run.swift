import CellpathCLI
import CellpathCore
import CommandLineKit
import PhoneNumbers

extension ProgramImplementations {
    /// `number`, which `cellpath-helper` runs (Sources/HelperCommands).
    package static let phoneNumberCommands: [CommandImplementation] = [.async(NumberCommand.spec, NumberCommand.run)]
}

extension NumberCommand {
    static func run(_ options: Options, _ context: CommandContext) async throws -> CommandOutcome {
        let input = options.phone
        let configuration = try ConfigurationOptions.load(options, context)
        // The configured region is read only for a number without '+': a broken configuration
        // elsewhere (a missing tru.json, a bad timeout) does not concern this command.
        let number = try PhoneNumber.parse(
            input, defaultRegion: try configuration.region,
            regionIsExplicit: options.region != nil)

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

        if let adjustment = number.adjustment {
            context.logger.warning("\(adjustment)")
        }
        if !number.isMobileCapable {
            context.logger.warning(
                "this is a \(number.type.numberPhrase): SubscriberCheck and PhoneCheck need a mobile number")
        }
        let title = "\(number.internationalFormat): valid \(number.type.numberPhrase) (\(number.place))"
        return CommandOutcome(Output(title: title, record))
    }
}
