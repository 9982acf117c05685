import CellpathCLI
import CellpathCore
import Glibc
import ModemCommands
import SystemSupport

// `cellpath modems`, `cellpath bearer` and `cellpath fetch --modem` run here, in the executable
// that links libmbim and libqmi (with GIO); the front `cellpath` parses the same command line
// and execs this one for them.
let code = CellpathCLI.main(
    Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current(),
    implementations: .modems)
ProcessEnd.exit(code)
