import CellpathCLI
import CellpathCore
import Glibc
import ServeCommands
import SystemSupport

// `cellpath serve` runs here, in the executable that links libmicrohttpd and libphonenumber; the
// front `cellpath` parses the same command line and execs this one for it.
let code = CellpathCLI.main(
    Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current(),
    implementations: .server)
ProcessEnd.exit(code)
