import CellpathCore
import CommandLineKit
import Configuration

/// The options that carry configuration values (one spec each, shared by the commands that
/// take them), and loading the effective configuration with them on top.
package enum ConfigurationOptions {
    package static let region = OptionKey<String>(
        ConfigurationFlag.region.rawValue, "cc",
        help: "Region for numbers written without a country code (ISO 3166, e.g. GB). Default: the config's region.")
    package static let profile = OptionKey<String>(
        ConfigurationFlag.profile.rawValue, "name", help: "Server profile from the config's [server] group (e.g. development).")
    package static let serverURL = OptionKey<String>(
        ConfigurationFlag.serverURL.rawValue, "url", help: "Backend base URL for the selected profile.")
    /// The check commands' name for `--server-url`.
    package static let server = OptionKey<String>(
        "server", "url", help: "Development server (tru.ID dev-server contract, or cellpath serve) base URL. Default: the profile's.")
    package static let truJSON = OptionKey<String>(
        ConfigurationFlag.truJSON.rawValue, "path", help: "tru.json with the tru.ID credentials (as the tru CLI writes it).")
    package static let dataResidency = OptionKey<String>(
        ConfigurationFlag.dataResidency.rawValue, "region", help: "tru.ID data residency: eu, in or us.")
    package static let apiBase = OptionKey<String>(
        ConfigurationFlag.apiBase.rawValue, "url",
        help: "tru.ID API base URL, instead of the data residency's (the simulator sets it).")
    package static let caFile = OptionKey<String>(
        ConfigurationFlag.caFile.rawValue, "path", help: "Extra CA certificates (PEM) to trust, besides the system store.")
    package static let simPrefix = OptionKey<String>(
        ConfigurationFlag.simPrefix.rawValue, "prefix",
        help: "Name prefix of the simulator's namespaces (default: the sim.prefix setting, cp-).")
    package static let hopTimeout = OptionKey<String>(
        ConfigurationFlag.hopTimeout.rawValue, "seconds", help: "Deadline of each HTTP hop, connect and read (default: 5).")
    package static let timeout = OptionKey<String>(
        ConfigurationFlag.timeout.rawValue, "seconds", help: "Deadline of the whole operation (default: 30).")
    package static let apn = OptionKey<String>(
        ConfigurationFlag.apn.rawValue, "name", help: "Access point name of a bearer that cellpath brings up (default: the modem's provisioned context).")

    /// Every configuration option, for `config show`.
    package static let all = [region, profile, serverURL, truJSON, dataResidency, apiBase, caFile, simPrefix, hopTimeout, timeout, apn]

    /// Loads the configuration with the configuration flags given on this command line, and
    /// logs its warnings (e.g. a secrets file readable by others). The values stay text:
    /// the configuration validates them.
    package static func load(_ parsed: ParsedCommand, _ context: CommandContext) throws -> EffectiveConfiguration {
        var flags: [String: String] = [:]
        for option in all {
            // An empty --apn is no value: it asks for the modem's provisioned context (`accessPointName`).
            if let value = parsed[option], !(value.isEmpty && option.spec.long == apn.spec.long) { flags[option.spec.long] = value }
        }
        if let server = parsed[server] { flags[ConfigurationFlag.serverURL.rawValue] = server }
        let configuration = try ConfigurationLoader(environment: context.environment, flags: flags, caller: context.caller).load()
        for warning in configuration.warnings { context.logger.warning("\(warning)") }
        return configuration
    }

    /// The APN of a bearer that a command brings up: its `--apn` (an empty one: the modem's
    /// provisioned context), else the configuration's `modem.apn` (`CELLPATH_APN`, the files),
    /// else nil (the provisioned context). Loads the configuration without logging its warnings.
    package static func accessPointName(_ parsed: ParsedCommand, _ context: CommandContext) throws -> String? {
        let given = parsed[apn]
        if given?.isEmpty == true { return nil }
        return try ConfigurationLoader(environment: context.environment, flags: given.map { [apn.spec.long: $0] } ?? [:]).load().apn
    }

    /// `--ip-type ipv4|ipv6|ipv4v6`, the one vocabulary of address families of every command
    /// that takes it (`fetch`, `bearer up`). `any`, fetch's former name for both, is still read
    /// as ipv4v6 (docs/fetch.md).
    package static let ipType = OptionKey<BearerIPType>(
        "ip-type", "type",
        help: "Address families: ipv4, ipv6 or ipv4v6 (default: the modem.ip_type setting, CELLPATH_IP_TYPE, else ipv4v6).",
        ValueConversion { text throws(InvalidOptionValue) in
            if text == "any" { return .ipv4v6 }
            return try ValueConversion<BearerIPType>.choice.convert(text)
        })

    /// The address families the command line asks for: its `--ip-type`, else the configuration's
    /// `modem.ip_type` (`CELLPATH_IP_TYPE`, the files), else ipv4v6.
    package static func ipType(_ parsed: ParsedCommand, _ context: CommandContext) throws -> BearerIPType {
        if let given = parsed[ipType] { return given }
        return try ConfigurationLoader(environment: context.environment, flags: [:]).load().ipType
    }
}
