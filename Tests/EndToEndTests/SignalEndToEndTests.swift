import Glibc
import SystemSupport
import TestSupport
import Testing

/// SIGINT/SIGTERM: the first cancels the running command (which cleans up and exits 130), a
/// second exits at once. A fetch whose DNS server never answers stands for a long operation,
/// inside a network namespace the test creates.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads)
struct SignalEndToEndTests {
    /// Runs `body` with a namespace whose loopback has a UDP "DNS server" that reads and never answers.
    private func withSilentDNS(_ body: (String) throws -> Void) throws {
        let namespace = "cpsig\(getpid())"
        _ = try ProcessRunner.run(["ip", "netns", "add", namespace])
        defer { _ = try? ProcessRunner.run(["ip", "netns", "delete", namespace]) }
        #expect(try ProcessRunner.run(["ip", "-n", namespace, "link", "set", "lo", "up"]).status == 0)
        try body(namespace)
    }

    /// Runs a fetch in `namespace` and sends it `signal` once the silent server has its first query
    /// (the fetch is under way, its handlers installed, however slow the machine); returns its exit
    /// status and what it wrote.
    private func fetch(_ namespace: String, interruptedBy signal: Int32) throws -> (status: Int32?, output: String) {
        let directory = try TemporaryDirectory.make("cellpath-signal")
        defer { FileSystem.removeTree(directory) }
        // The silent server lives as long as the fetch: both run under one shell in the namespace.
        let script = """
            python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(("127.0.0.1",53)); \
            open(sys.argv[1]+"/ready","w").close(); s.recv(512); open(sys.argv[1]+"/asked","w").close(); time.sleep(60)' "$1" &
            server=$!; while [ ! -e "$1/ready" ]; do sleep 0.02; done
            "$0" fetch --interface lo --allow-any-interface --dns 127.0.0.1 --hop-timeout 30 --timeout 60 http://slow.test/ & fetch=$!
            trap 'kill -INT $fetch' INT; trap 'kill -TERM $fetch' TERM
            wait $fetch; status=$?; while kill -0 $fetch 2>/dev/null; do wait $fetch; status=$?; done
            kill $server; exit $status
            """
        let process = try BackgroundProcess(
            ["ip", "netns", "exec", namespace, "bash", "-c", script, CellpathBinary.path, directory],
            output: "\(directory)/output",
            environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent"])
        try #require(
            Poll.until(timeout: .seconds(30)) { FileSystem.exists("\(directory)/asked") },
            "the fetch never asked its DNS server")
        kill(process.pid, signal)
        _ = process.wait(timeoutMs: 60_000)
        return (process.exitStatus, FileSystem.readText("\(directory)/output") ?? "")
    }

    @Test func firstSignalCancelsAndExits130() throws {
        try withSilentDNS { namespace in
            var start = timespec(), end = timespec()
            clock_gettime(CLOCK_MONOTONIC, &start)
            let result = try fetch(namespace, interruptedBy: SIGINT)
            clock_gettime(CLOCK_MONOTONIC, &end)
            #expect(result.status == 130, "\(result.output)")
            #expect(result.output.contains("cancelling… (press Ctrl-C again to exit now)"))
            #expect(result.output.contains("error: cancelled"))
            #expect(end.tv_sec - start.tv_sec < 25, "cancellation must not wait for the hop timeout")
        }
    }

    @Test func sigtermCancelsToo() throws {
        try withSilentDNS { namespace in
            let result = try fetch(namespace, interruptedBy: SIGTERM)
            #expect(result.status == 130, "\(result.output)")
            #expect(result.output.contains("cancelling…"))
        }
    }
}
