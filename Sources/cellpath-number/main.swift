import CellpathCLI
import CellpathCore
import Glibc
import NumberCommands
import SystemSupport

// `cellpath number` runs here, in the executable that links libphonenumber (with protobuf,
// abseil and ICU); the front `cellpath` parses the same command line and execs this one for it.
let code = CellpathCLI.main(
    Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current(),
    implementations: .phoneNumbers)
ProcessEnd.exit(code)
