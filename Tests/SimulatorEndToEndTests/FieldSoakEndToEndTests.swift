import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// Field mode on two modems with every delay zero and faults throughout: the network drops the
/// bearers, the modems report DNS servers 0.0.0.0 and `::` for a while, the fake API answers 503
/// and 429 now and then, and a modem resets every few checks. 300 checks in the test suite; `make
/// soak` runs 10,000 (docs/benchmarks.md, Soak). Asserted over the whole run: nothing of a check
/// on Wi-Fi, every failure classified, memory and descriptors flat after the first tenth, the
/// metrics file parseable whenever it is read, and nothing left behind.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct FieldSoakEndToEndTests {
    /// Two modems, zero delays, each bearer dropped by the network after a few seconds, one API
    /// request in 13 answered 503 and one check creation in 13 answered 429.
    private static var scenario: Scenario {
        var scenario = Scenario.builtIn
        scenario.modems = [SimulatedModem(index: 0), SimulatedModem(index: 1)]
        scenario.modems[0].faults.dropBearerAfterSeconds = 2
        scenario.modems[1].faults.dropBearerAfterSeconds = 3
        scenario.cellularPath = LinkConditions(delayMs: 0)
        scenario.wifiPath = LinkConditions(delayMs: 0)
        scenario.api.serverErrorStatus = 503
        scenario.api.rateLimitRetryAfter = 0
        scenario.api.faultEvery = 13
        scenario.api.rateLimitPerHour = nil
        return scenario
    }

    /// Whether `text` is Prometheus text format: comments `# HELP`/`# TYPE`, and samples
    /// `name{labels} value` or `name value` with a number as the value.
    static func isPrometheusText(_ text: String) -> Bool {
        guard text.hasSuffix("\n") else { return false }
        return text.split(separator: "\n").allSatisfy { line in
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") { return true }
            let parts = line.split(separator: " ")
            guard parts.count == 2, Double(parts[1]) != nil, let name = parts[0].split(separator: "{").first,
                name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
            else { return false }
            return !parts[0].contains("{") || parts[0].hasSuffix("}")
        }
    }

    /// Whether a request-log entry is the device leg of a check (check_url, the carrier, the
    /// return to the API), which must come from a bearer address.
    private static func isDeviceLeg(_ entry: JSONValue) -> Bool {
        let path = entry["path"]?.string ?? ""
        return entry["namespace"]?.string?.hasSuffix("carrier") == true || path.contains("/redirect")
            || path.contains("/callback")
    }

    /// The descriptors one lane's check can hold at once: its transfer's wake-up pipe (2), and
    /// each socket it opened on the bearer twice (curl's or c-ares's, and the duplicate kept to the
    /// chain's end for a leak-proof close) — at most 5: the DNS queries over IPv4 and IPv6, and a
    /// connection to each host of the chain (check_url, the carrier, the callback) — and the
    /// backend's connection to the API over Wi-Fi (1).
    static let descriptorsPerLane = 2 + 2 * 5 + 1
    /// What the two lanes share and hold for a moment: the metrics file being replaced (its
    /// directory and temporary file), a bring-up's or a release's lock and record files and
    /// netlink socket, and a reset modem's new mbim-proxy connection.
    static let descriptorsShared = 6

    @Test func fieldModeUnderFaultsStaysCleanAndFlat() throws {
        let checks = Soak.checks(short: 300, long: 10_000)
        let resetEvery = 25, dnsPeriod = 15
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let output = "/tmp/\(device.prefix)soak-\(getpid()).out", metrics = "/tmp/\(device.prefix)soak.prom"
            defer { unlink(output); unlink(metrics) }
            unlink(output)
            var environment = SimulatedDevice.path
            environment["HOME"] = "/nonexistent"
            environment["CELLPATH_SYSTEM_CONFIG"] = "/nonexistent/cellpath.conf"
            for (name, value) in try device.environment() { environment[name] = value }
            var samples: [(done: Int, usage: ProcessUsage)] = []
            var metricsReads = 0, badMetrics: [String] = [], resets = 0, dnsFaults = 0
            var status: Int32?
            let started = MonotonicClock.now
            // Only packets that carry a bearer or carrier address are a check's: the backend's API
            // calls go over Wi-Fi, as they should.
            let (_, packets) = try device.capture(
                on: ["wlan0"], filter: ["net", "100.64.0.0/16", "or", "net", "2001:db8:64::/48"]
            ) {
                let process = try BackgroundProcess(
                    [
                        "ip", "netns", "exec", device.ue, CellpathBinary.path, "subscriber-check", "-m", "all",
                        "--direct", "--repeat", String(checks / 2), "--interval", "0", "--json", "--metrics-file",
                        metrics
                    ], output: output, environment: environment)
                defer { process.stop() }
                let deadline = MonotonicClock.now + Double(checks) * 2 + 120
                var dnsQuirk = false
                while !process.wait(timeoutMs: 250), MonotonicClock.now < deadline {
                    let done = (FileSystem.readText(output) ?? "").split(separator: "\n")
                        .filter { $0.hasPrefix("{") && $0.contains(#""run": "#) }.count
                    if let usage = ProcessUsage.of(process.pid) { samples.append((done, usage)) }
                    if let text = FileSystem.readText(metrics) {
                        metricsReads += 1
                        if !Self.isPrometheusText(text) { badMetrics.append(text) }
                    }
                    while done >= (resets + 1) * resetEvery, done < checks {
                        _ = try SimulatedWorld.lifecycle(.reset(slowMs: 0), modem: resets % 2, prefix: device.prefix)
                        resets += 1
                    }
                    let wantQuirk = (done / dnsPeriod) % 3 == 1 && done < checks
                    if wantQuirk != dnsQuirk {
                        _ = try SimulatedWorld.lifecycle(
                            .reportDNS(wantQuirk ? ["0.0.0.0", "::"] : nil), modem: 1, prefix: device.prefix)
                        dnsQuirk = wantQuirk
                        if wantQuirk { dnsFaults += 1 }
                    }
                }
                status = process.wait(timeoutMs: 0) ? process.exitStatus : nil
            }
            let seconds = MonotonicClock.now - started
            let text = FileSystem.readText(output) ?? ""
            #expect(status != nil, "the field run did not end in time")
            let runs = text.split(separator: "\n").filter { $0.hasPrefix("{") }
                .compactMap { try? JSONValue.parse(String($0)) }.filter { $0["run"] != nil }
            #expect(
                runs.count == checks,
                """
                \(runs.count) of \(checks) runs reported; the output's last lines other than runs:
                \(text.split(separator: "\n").filter { !$0.contains(#""run": "#) }.suffix(30).joined(separator: "\n"))
                """)
            let failures = runs.compactMap { $0["failure"]?.string }
            var byReason: [String: Int] = [:]
            for reason in failures { byReason[reason, default: 0] += 1 }
            let unclassified = runs.filter {
                $0["outcome"]?.string == nil && ["unknown", "internalError", nil].contains($0["failure"]?.string)
            }
            #expect(unclassified.isEmpty, "failures without a reason: \(unclassified.prefix(3))")
            let verified = runs.filter { $0["outcome"]?.string == "verified" }.count
            #expect(verified > 0, "no run was verified: \(byReason)")

            // The faults happened, and no check went over Wi-Fi.
            let log = try device.requestLog()
            #expect(log.contains { $0["status"] == .int(503) } && log.contains { $0["status"] == .int(429) })
            #expect(resets > 0 && dnsFaults > 0)
            #expect(packets["wlan0"] == [], "a check's packets on Wi-Fi: \(packets["wlan0"]?.prefix(5) ?? [])")
            let overWiFi = log.filter { entry in
                let source = entry["source"]?.string ?? ""
                return Self.isDeviceLeg(entry) && (source.hasPrefix("192.0.2.") || source.hasPrefix("2001:db8:2::"))
            }
            #expect(overWiFi.isEmpty, "device-leg requests from Wi-Fi: \(overWiFi.prefix(3))")

            // Memory and descriptors from the tenth of the runs to the end.
            let steady = samples.filter { $0.done >= checks / 10 }
            let first = try #require(steady.first?.usage), last = try #require(steady.last?.usage)
            let growth = last.peakRSSKiB - first.peakRSSKiB
            let fds = steady.map(\.usage.descriptors)
            let fdRange = (fds.min() ?? 0) ... (fds.max() ?? 0)
            #expect(growth <= 2048, "peak RSS grew \(growth) KiB: \(first) → \(last)")
            // The count moves with the two lanes' checks in flight, within what they can hold at once.
            let inFlight = 2 * Self.descriptorsPerLane + Self.descriptorsShared
            #expect(fdRange.count - 1 <= inFlight, "descriptors between \(fdRange) (from \(first) to \(last))")
            // A leak raises the count between checks too: the low tenth of the samples stays where it was.
            let halves = [fds.prefix(fds.count / 2), fds.suffix(fds.count / 2)].map {
                Array($0.sorted().prefix(max(1, $0.count / 10)))
            }
            let floors = halves.map { $0.last ?? 0 }
            #expect(
                floors[1] <= floors[0] + 2, "the descriptors' low tenth rose from \(floors[0]) to \(floors[1]): \(fds)")
            #expect(metricsReads > 0 && badMetrics.isEmpty, "unparseable metrics: \(badMetrics.prefix(1))")

            // Nothing left behind.
            let left = try device.bearerLeftovers()
            let state = try #require(try device.environment()["CELLPATH_STATE_DIR"])
            let records = (FileSystem.entries(state) ?? []).filter { $0.hasSuffix(".json") }
            let warnings = text.split(separator: "\n").filter { !$0.hasPrefix("{") && $0.contains("bearer") }.suffix(20)
            #expect(
                left == [] && records == [],
                "left behind: \(left), records \(records); the run's last lines on bearers:\n\(warnings.joined(separator: "\n"))"
            )

            Soak.report(
                "field: \(runs.count) checks on 2 modems in \(Int(seconds)) s (\((Double(runs.count) / seconds * 10).rounded() / 10) checks/s), "
                    + "\(verified) verified, failures \(byReason.sorted { $0.key < $1.key }), \(resets) resets, "
                    + "\(dnsFaults) DNS fault spells, exit \(status.map(String.init) ?? "none")")
            Soak.report(
                "field: peak RSS \(first.peakRSSKiB) KiB at \(checks / 10) checks, \(last.peakRSSKiB) KiB at the end "
                    + "(+\(growth) KiB); descriptors \(fdRange.lowerBound)–\(fdRange.upperBound); "
                    + "metrics file read \(metricsReads) times, \(badMetrics.count) unparseable; Wi-Fi packets of a check: "
                    + "\(packets["wlan0"]?.count ?? -1)")
        }
    }
}
