import CellpathCLI
import CellpathCore
import Glibc

// `cellpath serve` runs here, in the executable that links libmicrohttpd and libphonenumber; the
// front `cellpath` parses the same command line and execs this one for it.
let code = CellpathCLI.main(Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current(),
                            program: .server, implementations: ["cellpath serve": .async(ServeCommand.run)])
exit(code)
