// Test host for SimulatorWorldTests: runs the simulator daemon exactly as
// `cellpath sim up --foreground --prefix P [--scenario FILE]` does, without the CLI.
import CellpathCore
import Glibc
import Simulator

var arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.starts(with: ["sim", "up", "--foreground"]) else {
    _ = "usage: SimulatorDaemonHost sim up --foreground --prefix P [--scenario FILE]\n".withCString { write(2, $0, strlen($0)) }
    exit(64)
}
arguments.removeFirst(3)
var options = DaemonOptions()
while arguments.count >= 2 {
    let (name, value) = (arguments.removeFirst(), arguments.removeFirst())
    switch name {
    case "--prefix": options.prefix = value
    case "--scenario": options.scenarioPath = value
    default: exit(64)
    }
}
do {
    try SimulatorDaemon.run(options)
} catch {
    let message = "error: \(error)\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(error is CellpathError ? 69 : 70)
}
