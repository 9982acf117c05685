// Test helper: `cellpath-ipconfig-probe apply INTERFACE ADDRESS [MTU] STATE` applies a bearer's
// addressing in the caller's network namespace (run it with `ip netns exec`) and stores what it
// changed as JSON in STATE; `cellpath-ipconfig-probe undo STATE` undoes it. Exit 0, or the
// error's sysexits code with the message on stderr.
import CellpathCore
import FoundationEssentials
import Glibc
import IPConfiguration

func fail(_ error: CellpathError) -> Never {
    _ = "error: \(error.message)\n".withCString { write(2, $0, strlen($0)) }
    exit(error.kind == .permission ? 77 : error.kind == .dataError ? 65 : 69)
}

let args = Array(CommandLine.arguments.dropFirst())
switch args.first {
case "apply" where args.count >= 4:
    let addressing = BearerAddressing(interface: args[1], address: args[2], mtu: args.count == 5 ? Int(args[3]) : nil)
    do {
        let applied = try InterfaceConfigurator().apply(addressing)
        let data = try JSONEncoder().encode(applied)
        guard FileManager.default.createFile(atPath: args.last!, contents: data) else { exit(70) }
    } catch let error as CellpathError {
        fail(error)
    }
case "undo" where args.count == 2:
    guard let data = FileManager.default.contents(atPath: args[1]),
          let applied = try? JSONDecoder().decode(AppliedAddressing.self, from: data) else { exit(66) }
    let problems = InterfaceConfigurator().undo(applied)
    for problem in problems { _ = "problem: \(problem)\n".withCString { write(2, $0, strlen($0)) } }
    exit(problems.isEmpty ? 0 : 1)
default:
    _ = "usage: cellpath-ipconfig-probe apply IF ADDR [MTU] STATE | undo STATE\n".withCString { write(2, $0, strlen($0)) }
    exit(64)
}
