import CellpathCLI
import CellpathCore
import Glibc
import SystemSupport

// The executable is only this: everything else lives in the libraries. This front runs the
// client commands and hands the others to their executables (docs/architecture.md, Executables).
let code = CellpathCLI.main(
    Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current(),
    implementations: .front)
ProcessEnd.exit(code)
