// Test helper: `cellpath-ipconfig-probe apply [--ipv6 ADDRESS/LEN[@GATEWAY]] INTERFACE ADDRESS|-
// [MTU] STATE` applies a bearer's addressing (`-`: no IPv4) in the caller's network namespace (run
// it with `ip netns exec`) and stores what it changed as JSON in STATE; `cellpath-ipconfig-probe undo STATE` undoes it. Exit 0, or the
// error's sysexits code with the message on stderr.
import CellpathCore
import FoundationEssentials
import Glibc
import IPConfiguration

func fail(_ error: CellpathError) -> Never {
    _ = "error: \(error.message)\n".withCString { write(2, $0, strlen($0)) }
    exit(error.kind == .permission ? 77 : error.kind == .dataError ? 65 : 69)
}

var args = Array(CommandLine.arguments.dropFirst())
var ipv6: IPv6Addressing?
if args.count > 2, args[0] == "apply", args[1] == "--ipv6" {
    let parts = args[2].split(separator: "@").map(String.init)
    let address = parts[0].split(separator: "/").map(String.init)
    ipv6 = IPv6Addressing(
        address: address[0], prefixLength: address.count > 1 ? Int(address[1]) ?? -1 : 128,
        gateway: parts.count > 1 ? parts[1] : nil)
    args.removeSubrange(1 ... 2)
}
switch args.first {
case "apply" where args.count >= 4:
    let addressing = BearerAddressing(
        interface: args[1], address: args[2] == "-" ? nil : args[2], ipv6: ipv6,
        mtu: args.count == 5 ? Int(args[3]) : nil)
    do {
        let applied = try InterfaceConfigurator().apply(addressing)
        let data = try JSONEncoder().encode(applied)
        guard FileManager.default.createFile(atPath: args.last!, contents: data) else { exit(70) }
    } catch let error as CellpathError {
        fail(error)
    }
case "undo" where args.count == 2:
    guard let data = FileManager.default.contents(atPath: args[1]),
        let applied = try? JSONDecoder().decode(AppliedAddressing.self, from: data)
    else { exit(66) }
    let problems = InterfaceConfigurator().undo(applied)
    for problem in problems { _ = "problem: \(problem)\n".withCString { write(2, $0, strlen($0)) } }
    exit(problems.isEmpty ? 0 : 1)
default:
    _ = "usage: cellpath-ipconfig-probe apply [--ipv6 ADDR/LEN[@GW]] IF ADDR|- [MTU] STATE | undo STATE\n".withCString {
        write(2, $0, strlen($0))
    }
    exit(64)
}
