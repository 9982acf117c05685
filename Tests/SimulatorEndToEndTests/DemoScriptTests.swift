import Glibc
import Simulator
import TestSupport
import Testing

/// `make demo` (scripts/demo.sh) as a user runs it with its output redirected.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct DemoScriptTests {
    /// The world's prefix is DEMO_PREFIX, not the install's PREFIX that the Makefile (or the
    /// shell) also sets; output that is not a terminal has no colour escapes; the world goes.
    @Test func theDemoRedirectedIsPlainTextAndLeavesNothing() throws {
        let prefix = WorldFixture.uniquePrefix()
        defer { _ = try? SimulatedWorld.down(prefix: prefix) }
        let result = try ProcessRunner.run(
            [Repository.root + "/scripts/demo.sh"],
            environment: [
                "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8",
                "CELLPATH": CellpathBinary.path, "DEMO_PREFIX": prefix, "PREFIX": "/usr/local"
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains("\u{1B}"), "colour escapes in redirected output")
        #expect(result.stdout.contains("$ cellpath subscriber-check +447940448591 -m 0 --direct\n"), "\(result.stdout)")
        #expect(result.stdout.contains("+44 7940 448591: valid mobile number (GB)"))
        let namespaces = try ProcessRunner.run(
            ["ip", "netns", "list"], environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        ).stdout
        #expect(!namespaces.contains(prefix), "the demo left its world: \(namespaces)")
    }
}
