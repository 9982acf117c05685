import CellpathCLI
import Glibc

// The executable is only this: everything else lives in the libraries.
var environment: [String: String] = [:]
var entry = environ
while let pointer = entry.pointee {
    let pair = String(cString: pointer)
    if let equals = pair.firstIndex(of: "=") {
        environment[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
    }
    entry += 1
}
let code = await CellpathCLI.main(Array(CommandLine.arguments.dropFirst()), environment: environment)
exit(code)
