import CellpathCLI
import CellpathCore
import Glibc

// `cellpath modems` and `cellpath bearer` run here, in the executable that links libmbim and libqmi (with GIO); the
// front `cellpath` parses the same command line and execs this one for it.
let code = CellpathCLI.main(Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current(),
                            program: .modems, implementations: ModemsCommand.implementations.merging(BearerCommand.implementations) { $1 })
exit(code)
