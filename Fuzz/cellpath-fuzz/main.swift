// cellpath-fuzz TARGET [libFuzzer options and corpus directories]: runs one fuzz target under
// libFuzzer (docs/fuzzing.md). Built only by `make fuzz`, with libFuzzer linked in.
import Glibc

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The target this process runs; set once, before libFuzzer starts.
nonisolated(unsafe) private var selected: @Sendable ([UInt8]) -> Void = { _ in }

let arguments = CommandLine.arguments
if arguments.count == 2, arguments[1] == "--list" {
    print(allFuzzTargets.map(\.name).joined(separator: "\n"))
    exit(0)
}
guard arguments.count >= 2, let target = allFuzzTargets.first(where: { $0.name == arguments[1] }) else {
    let names = allFuzzTargets.map(\.name).joined(separator: " ")
    writeError("usage: cellpath-fuzz TARGET [libFuzzer options] [CORPUS_DIR...]\ntargets: \(names)\n")
    exit(2)
}
selected = target.run
// libFuzzer sees the program name and what follows the target name.
var argc = CommandLine.argc - 1
var argv = CommandLine.unsafeArgv + 1
argv[0] = CommandLine.unsafeArgv[0]
let status = LLVMFuzzerRunDriver(&argc, &argv) { data, size in
    selected(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
exit(status)
