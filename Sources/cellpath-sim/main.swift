import CellpathCLI
import CellpathCore
import Glibc

// `cellpath sim …` runs here, in the executable that links the simulator (libmicrohttpd,
// GnuTLS); the front `cellpath` parses the same command line and execs this one for them.
let code = CellpathCLI.main(Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current(),
                            program: .simulator, implementations: SimCommand.implementations)
exit(code)
