import CellpathCore
import FoundationEssentials
import Glibc
import Simulator
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// A load run against the daemon's fake API: many checks expire while their webhooks cannot be
/// delivered, and the daemon's threads and memory stay bounded.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.alone))
struct WebhookLoadWorldTests {
    static let checks = 1500

    /// curl in the device namespace with the world's CA; returns stdout.
    private func curl(_ prefix: String, _ arguments: [String]) throws -> String {
        let result = try Curl.onDevice(of: prefix, arguments, maxTime: 120)
        #expect(result.status == 0, "curl \(arguments.prefix(3)): \(result.stderr)")
        return result.stdout
    }

    /// A field of /proc/PID/status, as a number (`Threads`, `VmRSS` in kB).
    private func status(_ field: String, pid: Int32) throws -> Int {
        let text = String(decoding: try FileSystem.read("/proc/\(pid)/status"), as: UTF8.self)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        return try #require(Int(line.dropFirst(field.count + 1).split(whereSeparator: \.isWhitespace).first ?? ""))
    }

    @Test func expiringChecksWhoseWebhooksAreRefusedKeepTheDaemonsThreadsAndMemoryBounded() throws {
        var scenario = Scenario.builtIn
        scenario.wifiPath = LinkConditions(delayMs: 0)
        // Nothing listens there: every attempt is refused, then retried.
        scenario.api.callbackURL = "http://192.0.2.23:9/hook"
        scenario.api.checkTTLSeconds = 1
        scenario.api.rateLimitPerHour = nil
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            let run = RunDirectory(prefix: prefix)
            let credentials = try #require(SimulatorCredentials.load(run))
            let token = try #require(
                JSONValue.parse(
                    curl(
                        prefix,
                        [
                            "-u", "\(credentials.clientID):\(credentials.clientSecret)",
                            "-d", "grant_type=client_credentials&scope=subscriber_check",
                            "https://api.truid.test/oauth2/v1/token"
                        ]))["access_token"]?.string)
            let daemon = try #require(
                Int32(
                    String(decoding: try FileSystem.read(run.daemonPIDFile), as: UTF8.self)
                        .filter(\.isNumber)))
            let residentBeforeKB = try status("VmRSS", pid: daemon)
            // One curl, one connection, every check created in turn (`next` resets every option).
            let create = """
                cacert = "\(run.caCertificate)"
                url = "https://api.truid.test/subscriber_check/v0.2/checks"
                header = "Authorization: Bearer \(token)"
                header = "Content-Type: application/json"
                data = "{\\"phone_number\\":\\"+447940448591\\"}"
                output = "/dev/null"
                write-out = "%{http_code}\\n"
                """
            let config = "/tmp/\(prefix)create-checks.curl"
            try FileSystem.write(
                Array(Array(repeating: create, count: Self.checks).joined(separator: "\nnext\n").utf8), to: config,
                mode: 0o600)
            defer { unlink(config) }
            let created = try curl(prefix, ["-K", config]).split(separator: "\n")
            #expect(created.count == Self.checks && created.allSatisfy { $0 == "201" })

            // Every check expires within a few seconds, and its webhook keeps a place in the queue
            // through its retries: beyond the queue's 1000 places, webhooks are dropped.
            var log = ""
            Poll.until(timeout: .seconds(60), interval: .milliseconds(100)) {
                log = String(decoding: (try? FileSystem.read(run.logFile)) ?? [], as: UTF8.self)
                return log.contains("deliveries under way")
            }
            #expect(log.contains("dropped: 1000 deliveries under way"))
            let threads = try status("Threads", pid: daemon)
            let residentKB = try status("VmRSS", pid: daemon)
            #expect(threads < 40, "the daemon runs \(threads) threads")
            // A thread per delivery would cost ~1500 threads and ~25 MB; the queue costs a few MB.
            #expect(
                residentKB - residentBeforeKB < 16_000,
                "the daemon's resident memory grew from \(residentBeforeKB) kB to \(residentKB) kB")
        }
    }
}
