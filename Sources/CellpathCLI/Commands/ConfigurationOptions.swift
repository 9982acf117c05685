import CellpathCore
import CommandLineKit
import Configuration

/// An option that carries a configuration setting (`--region`, `--cacert`, …): a command reads its
/// value, and `ConfigurationOptions.load` takes it as the setting's flag, above the files and the
/// environment. Declared once here, and included by the commands that take it:
/// `@SettingOption(.region) package var region: String?`.
@propertyWrapper
package struct SettingOption: OptionDeclaration {
    /// The setting the value overrides.
    package let flag: ConfigurationFlag
    private let option: Option<String?>

    private init(_ flag: ConfigurationFlag, long: String? = nil, _ valueName: String, help: String) {
        self.flag = flag
        option = Option(long ?? flag.rawValue, valueName, help: help)
    }

    /// The option, declared in another command (with its own storage).
    package init(_ declaration: SettingOption) {
        flag = declaration.flag
        option = Option(declaration.option)
    }

    package var wrappedValue: String? { option.wrappedValue }

    package var optionSpec: OptionSpec? { option.optionSpec }
    package var argumentSpec: ArgumentSpec? { nil }

    package func bind(_ parsed: ParsedCommand) throws(UsageError) {
        try option.bind(parsed)
    }
}

extension SettingOption {
    package static let region = SettingOption(
        .region, "cc",
        help: "Region for numbers written without a country code (ISO 3166, e.g. GB). Default: the config's region.")
    package static let profile = SettingOption(
        .profile, "name", help: "Server profile from the config's [server] group (e.g. development).")
    package static let serverURL = SettingOption(.serverURL, "url", help: "Backend base URL for the selected profile.")
    /// The check commands' name for `--server-url`.
    package static let server = SettingOption(
        .serverURL, long: "server", "url",
        help: "Development server (tru.ID dev-server contract, or cellpath serve) base URL. Default: the profile's.")
    package static let truJSON = SettingOption(
        .truJSON, "path", help: "tru.json with the tru.ID credentials (as the tru CLI writes it).")
    package static let dataResidency = SettingOption(
        .dataResidency, "region",
        help: "tru.ID data residency: eu, in or us.")
    package static let apiBase = SettingOption(
        .apiBase, "url", help: "tru.ID API base URL, instead of the data residency's (the simulator sets it).")
    package static let caFile = SettingOption(
        .caFile, "path", help: "Extra CA certificates (PEM) to trust, besides the system store.")
    package static let simPrefix = SettingOption(
        .simPrefix, "prefix", help: "Name prefix of the simulator's namespaces (default: the sim.prefix setting, cp-).")
    package static let hopTimeout = SettingOption(
        .hopTimeout, "seconds", help: "Deadline of each HTTP hop, connect and read (default: 5).")
    package static let timeout = SettingOption(
        .timeout, "seconds",
        help: "Deadline of the whole operation (default: 30).")
    package static let apn = SettingOption(
        .apn, "name",
        help: "Access point name of a bearer that cellpath brings up (default: the modem's provisioned context).")
    /// `bearer up --apn`.
    package static let bearerAPN = SettingOption(
        .apn, "name",
        help: "Access point name (default: the modem.apn setting, CELLPATH_APN; else the modem's provisioned context).")
    /// `--apn` of the commands that bring a bearer up only if they need one (`fetch`, the checks).
    package static let modemAPN = SettingOption(
        .apn, "name",
        help: """
            With a modem: the access point name if the bearer must be brought up (default: the modem.apn setting, \
            CELLPATH_APN; else the modem's provisioned context).
            """)
}

/// Loading the effective configuration with a command's setting options on top, and the options
/// that read a setting as their default.
package enum ConfigurationOptions {
    /// Loads the configuration with the settings `options` carry (`SettingOption`), and logs its
    /// warnings (e.g. a secrets file readable by others). The values stay text: the
    /// configuration validates them.
    package static func load(
        _ options: some CommandOptions,
        _ context: CommandContext
    ) throws -> EffectiveConfiguration {
        var flags: [String: String] = [:]
        for setting in options.declarations(of: SettingOption.self) {
            // An empty --apn is no value: it asks for the modem's provisioned context (`bearerAddressing`).
            if let value = setting.wrappedValue, !(value.isEmpty && setting.flag == .apn) {
                flags[setting.flag.rawValue] = value
            }
        }
        let configuration = try ConfigurationLoader(
            environment: context.environment, flags: flags, caller: context.caller
        ).load()
        for warning in configuration.warnings { context.logger.warning("\(warning)") }
        return configuration
    }

    /// The APN and address families of a bearer that a command brings up, from one load of
    /// the configuration (without logging its warnings). The APN: `given` (`--apn`; an empty
    /// one: the modem's provisioned context, nil), else the configuration's `modem.apn`
    /// (`CELLPATH_APN`, the files), else nil (the provisioned context). The address families:
    /// `ipType` (`--ip-type`), else as `resolvedIPType` reads them.
    package static func bearerAddressing(
        apn given: String?, ipType: BearerIPType?, _ context: CommandContext
    ) throws -> (apn: String?, ipType: BearerIPType) {
        let provisioned = given?.isEmpty == true
        if provisioned, let ipType { return (nil, ipType) }
        let flags = given.flatMap { $0.isEmpty ? nil : [ConfigurationFlag.apn.rawValue: $0] } ?? [:]
        let configuration = try ConfigurationLoader(environment: context.environment, flags: flags).load()
        let families = try ipType ?? configuration.ipType
        return (provisioned ? nil : try configuration.apn, families)
    }

    /// `--ip-type ipv4|ipv6|ipv4v6`, the one vocabulary of address families of every command
    /// that takes it (`fetch`, `bearer up`). `any`, fetch's former name for both, is still read
    /// as ipv4v6 (docs/fetch.md).
    package static let ipType = Option<BearerIPType?>(
        "ip-type", "type",
        help: """
            Address families: ipv4, ipv6 or ipv4v6 (default: the modem.ip_type setting, CELLPATH_IP_TYPE, else \
            ipv4v6).
            """,
        ValueConversion(completion: ValueConversion<BearerIPType>.choice.completion) {
            text throws(InvalidOptionValue) in
            if text == "any" { return .ipv4v6 }
            return try ValueConversion<BearerIPType>.choice.convert(text)
        })

    /// The address families asked for: `given` (`--ip-type`), else the configuration's
    /// `modem.ip_type` (`CELLPATH_IP_TYPE`, the files), else ipv4v6.
    package static func resolvedIPType(_ given: BearerIPType?, _ context: CommandContext) throws -> BearerIPType {
        if let given { return given }
        return try ConfigurationLoader(environment: context.environment, flags: [:]).load().ipType
    }
}
