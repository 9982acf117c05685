import CellpathCLI
import CellpathCore
import Glibc

// The executable is only this: everything else lives in the libraries.
let code = await CellpathCLI.main(Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current())
exit(code)
