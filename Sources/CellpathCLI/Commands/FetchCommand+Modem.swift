import CellpathCore
import CommandLineKit
import ModemDiscovery

/// `fetch --modem`: the path from the modem layer. The front `cellpath` does not load libmbim or
/// libqmi: a fetch that needs a modem's bearer is routed to `cellpath-modem`, which runs the
/// same fetch with the modem layer's path provider.
extension FetchCommand {
    /// Where the fetch runs: in `cellpath-modem` with `-m/--modem`, or without `--interface` when
    /// a modem is present; in the front otherwise (an interface configured by another tool).
    static func route(_ options: Options, _ environment: [String: String]) -> Program {
        if options.modem != nil { return .modems }
        if options.interfacePath.interface != nil { return .front }
        return ModemDiscovery(roots: DeviceRoots(environment: environment)).discover().isEmpty ? .front : .modems
    }
}
