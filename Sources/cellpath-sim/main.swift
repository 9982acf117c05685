import CellpathCLI
import CellpathCore
import Glibc
import SimCommands
import SystemSupport

// `cellpath sim …` runs here, in the executable that links the simulator (libmicrohttpd,
// GnuTLS); the front `cellpath` parses the same command line and execs this one for them.
let code = CellpathCLI.main(
    Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current(),
    implementations: .simulator)
ProcessEnd.exit(code)
