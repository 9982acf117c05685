import CellpathCLI
import CellpathCore
import Glibc
import ModemCommands

// `cellpath modems`, `cellpath bearer` and `cellpath fetch --modem` run here, in the executable
// that links libmbim and libqmi (with GIO); the front `cellpath` parses the same command line
// and execs this one for them.
let implementations = ModemsCommand.implementations
    .merging(BearerCommand.implementations) { $1 }
    .merging(FetchCommand.implementations) { $1 }
let code = CellpathCLI.main(Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current(),
                            program: .modems, implementations: implementations)
exit(code)
