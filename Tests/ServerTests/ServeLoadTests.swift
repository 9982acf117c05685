import CellpathCore
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// `cellpath serve` under load: wrk (Debian `wrk`) in the device namespace at 1, 16 and 256
/// connections, twice, for a bounded time each, POST /subscriber-check against the world's fake API
/// with its rate limit off: no errors, no further token request, and file descriptors and memory
/// not growing from the first round to the second (beyond generous bounds).
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.alone))
struct ServeLoadTests {
    /// One wrk run: requests done, non-2xx answers and socket errors.
    private func wrk(
        _ prefix: String, connections: Int, script: String
    ) throws -> (requests: Int, errors: Int, output: String) {
        let result = try ProcessRunner.run([
            "ip", "netns", "exec", prefix + "ue", "wrk", "-t", connections == 1 ? "1" : "2",
            "-c", String(connections), "-d", "2s", "--timeout", "10s", "-s", script,
            "http://127.0.0.1:8080/subscriber-check"
        ])
        try #require(result.status == 0, "wrk: \(result.stderr)")
        var requests = 0, errors = 0
        for line in result.stdout.split(separator: "\n") {
            let text = line.drop { $0 == " " }
            if text.contains("requests in") { requests = Int(text.split(separator: " ").first ?? "") ?? 0 }
            if text.hasPrefix("Non-2xx or 3xx responses:") { errors += Int(text.split(separator: " ").last ?? "") ?? 1 }
            if text.hasPrefix("Socket errors:") {
                errors += text.split(separator: ",").compactMap { Int($0.split(separator: " ").last ?? "") }.reduce(
                    0, +)
            }
        }
        return (requests, errors, result.stdout)
    }

    /// The access-log lines of serve's log whose status is not 200, counted (who answered, status).
    private static func failedAnswers(_ log: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in (FileSystem.readText(log) ?? "").split(separator: "\n") where line.contains(#""status":"#) {
            guard let entry = try? JSONValue.parse(String(line)), let status = entry["status"]?.int, status != 200
            else { continue }
            counts["\(entry["answered_by"]?.string ?? "route") \(status)", default: 0] += 1
        }
        return counts
    }

    /// Open descriptors and resident memory (KiB) of `pid`.
    private func usage(_ pid: pid_t) throws -> (fds: Int, rssKiB: Int) {
        let fds = try ProcessRunner.run(["ls", "/proc/\(pid)/fd"]).stdout.split(separator: "\n").count
        let status = try ProcessRunner.run(["cat", "/proc/\(pid)/status"]).stdout
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }.flatMap { line in
            line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        return (fds, try #require(rss))
    }

    @Test func manyConnectionsZeroErrorsOneTokenAndNoGrowth() throws {
        var scenario = Scenario.builtIn
        scenario.api.rateLimitPerHour = nil
        try WorldFixture.withWorld(scenario: scenario) { (prefix: String) throws in
            let log = "/tmp/\(prefix)serve.log", script = "/tmp/\(prefix)post.lua"
            defer { unlink(log); unlink(script) }
            let lua =
                #"wrk.method = "POST"; wrk.body = '{"phone_number":"+447940448591"}'; wrk.headers["Content-Type"] = "application/json""#
            _ = try ProcessRunner.run(["sh", "-c", "cat > \(script)"], stdin: lua + "\n")
            var environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/tmp/\(prefix)home"]
            for line in try CellpathBinary.run(["sim", "env", "--prefix", prefix]).stdout.split(separator: "\n")
            where line.hasPrefix("export ") {
                let assignment = line.dropFirst("export ".count)
                guard let eq = assignment.firstIndex(of: "=") else { continue }
                environment[String(assignment[..<eq])] = String(
                    assignment[assignment.index(after: eq)...].filter { $0 != "'" })
            }
            let serve = try BackgroundProcess(
                [
                    "ip", "netns", "exec", prefix + "ue", CellpathBinary.path, "serve", "--api-base",
                    "https://api.truid.test",
                    "--listen", "127.0.0.1:8080", "--rate-limit", "0", "--max-connections-per-address", "512"
                ], output: log, environment: environment)
            defer { serve.stop() }
            Poll.until(timeout: .seconds(10)) { FileSystem.readText(log)?.contains(#""event":"listening""#) == true }
            func metric(_ name: String) throws -> Int? {
                let text = try Curl.run(in: prefix + "ue", ["http://127.0.0.1:8080/metrics"]).stdout
                return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
                    .flatMap { Int($0.split(separator: " ").last ?? "") }
            }
            func tokenRequests() throws -> Int? { try metric("cellpath_serve_token_requests_total") }

            var after: [(fds: Int, rssKiB: Int)] = []
            for round in 1 ... 2 {
                for connections in [1, 16, 256] {
                    // wrk ends a run with requests still in flight, which serve goes on answering:
                    // on a loaded machine they would count against the next run's 256.
                    let settled = Poll.until(timeout: .seconds(30)) {
                        (try? metric("cellpath_serve_requests_in_flight")) == 1  // this /metrics request
                    }
                    #expect(
                        settled,
                        "round \(round): serve's requests in flight did not end before \(connections) connections")
                    let run = try wrk(prefix, connections: connections, script: script)
                    #expect(
                        run.requests > 0 && run.errors == 0,
                        "round \(round), \(connections) connections: \(run.output); serve's answers other than 200: \(Self.failedAnswers(log))"
                    )
                }
                usleep(500_000)  // let closed connections go
                after.append(try usage(serve.pid))
                // One token at start (coverage scope, the credentials check) and one for subscriber_check, however many requests.
                #expect(try tokenRequests() == 2, "round \(round)")
            }
            // Between rounds the upstream client may keep a different number of connections open (one
            // descriptor each, up to serve's 256 requests in flight): a leak grows with the requests,
            // far beyond that.
            #expect(after[1].fds <= after[0].fds + 256 + 16, "descriptors grew: \(after)")
            #expect(after[1].rssKiB <= after[0].rssKiB + after[0].rssKiB / 2 + 16_384, "memory grew: \(after)")
        }
    }
}
