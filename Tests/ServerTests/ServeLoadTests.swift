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
    /// The wrk command line: `connections` for `seconds`, with the latency distribution.
    private static func wrkCommand(_ prefix: String, connections: Int, seconds: Int, script: String) -> [String] {
        [
            "ip", "netns", "exec", prefix + "ue", "wrk", "-t", connections == 1 ? "1" : "2",
            "-c", String(connections), "-d", "\(seconds)s", "--timeout", "10s", "--latency", "-s", script,
            "http://127.0.0.1:8080/subscriber-check"
        ]
    }

    /// One wrk run of 2 s: requests done, non-2xx answers and socket errors.
    private func wrk(
        _ prefix: String, connections: Int, script: String
    ) throws -> (requests: Int, errors: Int, output: String) {
        let result = try ProcessRunner.run(
            Self.wrkCommand(prefix, connections: connections, seconds: 2, script: script))
        try #require(result.status == 0, "wrk: \(result.stderr)")
        let (requests, errors, _) = Self.figures(result.stdout)
        return (requests, errors, result.stdout)
    }

    /// What wrk printed: requests done, non-2xx answers and socket errors, and the 99th
    /// percentile latency as printed (e.g. `12.34ms`).
    private static func figures(_ output: String) -> (requests: Int, errors: Int, p99: String?) {
        var requests = 0, errors = 0
        var p99: String?
        for line in output.split(separator: "\n") {
            let text = line.drop { $0 == " " }
            if text.contains("requests in") { requests = Int(text.split(separator: " ").first ?? "") ?? 0 }
            if text.hasPrefix("Non-2xx or 3xx responses:") { errors += Int(text.split(separator: " ").last ?? "") ?? 1 }
            if text.hasPrefix("Socket errors:") {
                errors += text.split(separator: ",").compactMap { Int($0.split(separator: " ").last ?? "") }.reduce(
                    0, +)
            }
            if text.hasPrefix("99%") { p99 = text.split(separator: " ").last.map(String.init) }
        }
        return (requests, errors, p99)
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

    /// A world of `scenario` with `cellpath serve` on the device (127.0.0.1:8080) and wrk's POST
    /// script; `body` gets the world's prefix, serve, its log, the script, and serve's metrics.
    private func withServe(
        _ scenario: Scenario,
        _ body: (String, BackgroundProcess, String, String, (String) throws -> Int?) throws -> Void
    ) throws {
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
            try body(prefix, serve, log, script, metric)
        }
    }

    @Test func manyConnectionsZeroErrorsOneTokenAndNoGrowth() throws {
        var scenario = Scenario.builtIn
        scenario.api.rateLimitPerHour = nil
        try withServe(scenario) { prefix, serve, log, script, metric in
            var after: [ProcessUsage] = []
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
                after.append(try #require(ProcessUsage.of(serve.pid)))
                // One token at start (coverage scope, the credentials check) and one for subscriber_check, however many requests.
                #expect(try metric("cellpath_serve_token_requests_total") == 2, "round \(round)")
            }
            // Between rounds the upstream client may keep a different number of connections open (one
            // descriptor each, up to serve's 256 requests in flight): a leak grows with the requests,
            // far beyond that.
            #expect(after[1].descriptors <= after[0].descriptors + 256 + 16, "descriptors grew: \(after)")
            #expect(after[1].rssKiB <= after[0].rssKiB + after[0].rssKiB / 2 + 16_384, "memory grew: \(after)")
        }
    }

    /// The soak: 256 connections for a warm-up (30 s; a minute under `make soak`) and then 30 s (10
    /// min under `make soak`), with access tokens that serve must renew every 15 s (a 75 s
    /// lifetime, renewed 60 s early): no errors (the fake API was told to give none), one token
    /// request per renewal in the fake API's request log, descriptors within what the connections
    /// hold, and the heap's live bytes at rest after the load where they were after the warm-up.
    /// Peak RSS is printed, not bounded: it follows the highest momentary load (docs/benchmarks.md, Soak).
    @Test func soakAt256Connections() throws {
        let warmUp = Soak.isLong ? 60 : 30, seconds = Soak.seconds(short: 30, long: 600), lifetime = 75, renewal = 15
        var scenario = Scenario.builtIn
        scenario.api.rateLimitPerHour = nil
        scenario.api.tokenLifetimeSeconds = lifetime
        try withServe(scenario) { prefix, serve, log, script, metric in
            let output = "/tmp/\(prefix)wrk.out"
            defer { unlink(output) }
            let started = MonotonicClock.now
            /// The heap's live bytes once the requests in flight are done (the /metrics request the only one).
            func heapAtRest() throws -> Int {
                let settled = Poll.until(timeout: .seconds(30)) {
                    (try? metric("cellpath_serve_requests_in_flight")) == 1
                }
                #expect(settled, "serve's requests in flight did not end")
                return try #require(try metric("cellpath_serve_heap_bytes_in_use"))
            }
            let warm = try ProcessRunner.run(
                Self.wrkCommand(prefix, connections: 256, seconds: warmUp, script: script))
            #expect(warm.status == 0 && Self.figures(warm.stdout).errors == 0, "warm-up: \(warm.stdout) \(warm.stderr)")
            let heapBefore = try heapAtRest()
            let wrk = try BackgroundProcess(
                Self.wrkCommand(prefix, connections: 256, seconds: seconds, script: script), output: output)
            var samples: [ProcessUsage] = []
            let loadStarted = MonotonicClock.now
            while !wrk.wait(timeoutMs: 1000), MonotonicClock.now < loadStarted + Double(seconds) + 60 {
                if let usage = ProcessUsage.of(serve.pid) { samples.append(usage) }
            }
            wrk.stop()
            #expect(wrk.exitStatus == 0, "wrk: \(FileSystem.readText(output) ?? "")")
            let run = Self.figures(FileSystem.readText(output) ?? "")
            #expect(
                run.requests > 0 && run.errors == 0,
                "\(FileSystem.readText(output) ?? ""); serve's answers other than 200: \(Self.failedAnswers(log))")
            let heapAfter = try heapAtRest()
            let elapsed = Int(MonotonicClock.now - started)

            let requestLog = try #require(
                try CellpathBinary.run(["sim", "env", "--prefix", prefix]).stdout.split(separator: "\n")
                    .first { $0.hasPrefix("export CELLPATH_SIM_RUN_DIR=") }
                    .map { $0.split(separator: "=", maxSplits: 1)[1].filter { $0 != "'" } + "/requests.log" })
            let tokens =
                Int(
                    try ProcessRunner.run(["grep", "-c", "/oauth2/v1/token", requestLog]).stdout.filter(\.isNumber))
                ?? 0
            // The coverage token of serve's start-up, and subscriber_check's: the first and one per renewal.
            #expect(tokens >= 2 && tokens <= 2 + elapsed / renewal + 1, "\(tokens) token requests in \(elapsed) s")

            let first = try #require(samples.first), last = try #require(samples.last)
            let fds = samples.map(\.descriptors)
            // 256 connections in, and up to as many upstream: the count moves with them, a leak grows.
            #expect((fds.max() ?? 0) - (fds.min() ?? 0) <= 2 * 256 + 16, "descriptors: \(fds)")
            // Live objects at rest: the upstream connections kept are as many as before (up to 256).
            let heapGrowth = (heapAfter - heapBefore) / 1024
            #expect(
                heapGrowth <= 2048, "the heap's live bytes at rest grew \(heapGrowth) KiB: \(heapBefore) → \(heapAfter)"
            )
            Soak.report(
                "serve: \(run.requests) requests in \(seconds) s at 256 connections after \(warmUp) s of warm-up, \(run.errors) errors, "
                    + "p99 \(run.p99 ?? "?"), \(tokens) token requests in \(elapsed) s (token lifetime \(lifetime) s); "
                    + "heap in use at rest \(heapBefore / 1024) KiB after the warm-up, \(heapAfter / 1024) KiB after the load (\(heapGrowth >= 0 ? "+" : "")\(heapGrowth) KiB); "
                    + "peak RSS \(first.peakRSSKiB) KiB → \(last.peakRSSKiB) KiB; descriptors \(fds.min() ?? 0)–\(fds.max() ?? 0)"
            )
        }
    }
}
