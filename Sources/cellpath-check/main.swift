import CellpathCLI
import CellpathCore
import CheckCommands
import Glibc
import SystemSupport

// `cellpath subscriber-check`, `phone-check`, `sim-check` and `coverage` run here, in the
// executable that links the modem layer (libmbim, libqmi) and libphonenumber; the front
// `cellpath` parses the same command line and execs this one for them.
let code = CellpathCLI.main(
    Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current(),
    implementations: .checks)
ProcessEnd.exit(code)
