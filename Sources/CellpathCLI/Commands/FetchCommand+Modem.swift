import CellpathCore
import CommandLineKit
import ModemDiscovery

/// `fetch --modem`: the path from the modem layer. The front `cellpath` does not load libmbim or
/// libqmi: a fetch that needs a modem's bearer is routed to `cellpath-modem`, which runs the
/// same fetch with the modem layer's path provider.
extension FetchCommand {
    package static let apn = OptionKey<String>(
        "apn", "name", help: "With a modem: the access point name if the bearer must be brought up (default: the modem.apn setting, CELLPATH_APN; else the modem's provisioned context).")
    package static let keepBearer = Flag(
        "keep-bearer", help: "With a modem: leave a bearer that this command brought up connected (cellpath bearer down takes it down).")

    /// Where the fetch runs: in `cellpath-modem` with `-m/--modem`, or without `--interface` when
    /// a modem is present; in the front otherwise (an interface configured by another tool).
    package static func route(_ parsed: ParsedCommand, _ environment: [String: String]) -> Program {
        if parsed[ModemOption.modem] != nil { return .modems }
        if parsed[interface] != nil { return .front }
        return ModemDiscovery(roots: DeviceRoots(environment: environment)).modems().isEmpty ? .front : .modems
    }

    /// Refuses what contradicts a path from the modem: its interface and DNS servers are the bearer's.
    package static func checkModemPath(_ parsed: ParsedCommand) throws(UsageError) {
        if parsed[interface] != nil {
            throw UsageError("'--modem' cannot be combined with '--interface': the modem's bearer gives the interface", command: parsed.path)
        }
        if !parsed[dns].isEmpty {
            throw UsageError("'--dns' cannot be combined with '--modem': the bearer gives its DNS servers", command: parsed.path)
        }
    }

    /// The APN of a bearer this fetch brings up (`--apn`, else the configuration's).
    package static func bearerAPN(_ parsed: ParsedCommand, _ context: CommandContext) throws -> String? {
        try ConfigurationOptions.accessPointName(parsed, context)
    }
}
