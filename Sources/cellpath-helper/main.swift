import CellpathCLI
import CellpathCore
import HelperCommands
import SystemSupport

// `cellpath sim …`, `number`, the checks and `serve` run here, in the executable that links the
// simulator, libphonenumber, the modem layer and the server; the front `cellpath` parses the same
// command line and execs this one for them.
let code = CellpathCLI.main(
    Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current(),
    implementations: .helper)
ProcessEnd.exit(code)
