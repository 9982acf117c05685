import Glibc

/// One fuzz target: a parser the project wrote, fed arbitrary bytes, and the invariants its
/// result must keep. An invariant that fails is a crash (`require`), so libFuzzer keeps the input.
protocol FuzzTarget {
    /// The name `make fuzz` and the corpus directory use (Tests/FuzzCorpus/<name>).
    static var name: String { get }
    static func run(_ input: [UInt8])
}

/// A target as the driver calls it.
struct RegisteredTarget: Sendable {
    let name: String
    let run: @Sendable ([UInt8]) -> Void

    init<Target: FuzzTarget>(_ target: Target.Type) {
        name = Target.name
        run = { Target.run($0) }
    }
}

/// Every target, in the order `make fuzz` runs them.
let allFuzzTargets: [RegisteredTarget] = [
    RegisteredTarget(RedirectTarget.self),
    RegisteredTarget(JSONRoundTripTarget.self),
    RegisteredTarget(ResponseTarget.self),
    RegisteredTarget(PhoneNumberTarget.self),
    RegisteredTarget(MBIMFrameTarget.self),
    RegisteredTarget(QMIFrameTarget.self),
    RegisteredTarget(ModemTraceTarget.self),
    RegisteredTarget(ScenarioTarget.self),
    RegisteredTarget(ConfigurationTarget.self),
    RegisteredTarget(ServeRequestTarget.self),
    RegisteredTarget(WebhookTarget.self)
]

/// Stops the process with `message` unless `condition` holds: libFuzzer reports it as a crash and
/// writes the input to a `crash-…` file.
func require(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line)
{
    guard !condition else { return }
    writeError("invariant failed at \(file):\(line): \(message())\n")
    abort()
}

/// Bytes shown for a failure message: printable ASCII as it is, the rest escaped.
func shown(_ text: String) -> String {
    text.unicodeScalars.map {
        $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? String($0) : "\\u{\(String($0.value, radix: 16))}"
    }
    .joined()
}

/// Writes `text` to standard error, unbuffered (the process may abort right after).
func writeError(_ text: String) {
    var bytes = Array(text.utf8)
    _ = write(2, &bytes, bytes.count)
}
