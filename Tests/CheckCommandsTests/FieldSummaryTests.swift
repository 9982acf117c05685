import CellpathCore
import FoundationEssentials
import Testing
import Workflow

@testable import CheckCommands
@testable import CommandLineKit

/// Field mode's summary: the worst verdict for the exit code, and the Prometheus file.
@Suite struct FieldSummaryTests {
    private static func run(_ outcome: CheckOutcome, checkURLMs: Double) -> CheckRunReport {
        var report = CheckRunReport(
            product: .subscriberCheck, phoneNumber: "+447940448591", backend: "test", apiVersion: .v0_2)
        report.outcome = outcome
        report.steps = [CheckStepTiming(step: "check_url", startMs: 0, durationMs: checkURLMs, succeeded: true)]
        report.totalMs = checkURLMs
        return report
    }

    @Test func theWorstVerdictIsNotVerifiedThenSIMChanged() {
        var summary = FieldSummary(product: .subscriberCheck)
        #expect(summary.worstOutcome == nil)
        summary.add(Self.run(.verified, checkURLMs: 10))
        #expect(summary.worstOutcome == .verified)
        summary.add(Self.run(.simChanged, checkURLMs: 10))
        #expect(summary.worstOutcome == .simChanged)
        summary.add(Self.run(.notVerified, checkURLMs: 10))
        summary.add(Self.run(.verified, checkURLMs: 10))
        #expect(summary.worstOutcome == .notVerified)
        #expect(CheckListing.exitCode(summary.worstOutcome) == .notVerified)
    }

    /// The success rate reads as the title's share does for people, and stays a number in JSON.
    @Test func theSuccessRateIsAPercentageForPeopleAndAFractionInJSON() {
        var summary = FieldSummary(product: .subscriberCheck)
        for _ in 0 ..< 39 { summary.add(Self.run(.verified, checkURLMs: 10)) }
        var failed = Self.run(.verified, checkURLMs: 10)
        failed.outcome = nil
        failed.failure = CellpathError(.unavailable, "no bearer")
        summary.add(failed)
        let output = Output(title: summary.title, summary.record)
        let human = Renderer(json: false, color: false).render(output)
        #expect(human.contains("success rate:") && human.contains("97.5%"), "\(human)")
        #expect(Renderer(json: true, color: false).render(output).contains("\"success_rate\": 0.975"))
        #expect(Renderer.percent(1) == "100%" && Renderer.percent(0) == "0%" && Renderer.percent(0.5) == "50%")
    }

    @Test func eachModemsSeriesCarriesItsModemLabel() {
        var first = FieldSummary(product: .subscriberCheck, modem: 0)
        first.add(Self.run(.verified, checkURLMs: 12))
        var second = FieldSummary(product: .subscriberCheck, modem: 1)
        second.add(Self.run(.simChanged, checkURLMs: 15))
        let text = FieldSummary.prometheus([first, second])
        #expect(
            text.contains("cellpath_check_runs{product=\"subscriber_check\",modem=\"0\",outcome=\"verified\"} 1\n"),
            "\(text)")
        #expect(
            text.contains("cellpath_check_runs{product=\"subscriber_check\",modem=\"1\",outcome=\"sim_changed\"} 1\n"),
            "\(text)")
        #expect(
            text.contains("cellpath_check_runs{product=\"subscriber_check\",modem=\"0\",outcome=\"sim_changed\"} 0\n"),
            "\(text)")
        // One HELP and TYPE per metric, its series together.
        #expect(text.components(separatedBy: "# TYPE cellpath_check_runs gauge").count == 2)
        let runs = text.split(separator: "\n").enumerated().filter { $0.element.hasPrefix("cellpath_check_runs{") }.map(
            \.offset)
        #expect(runs.count == 8 && runs.last! - runs.first! == 7, "\(text)")
    }

    @Test func withoutModemsTheSeriesHaveNoModemLabel() {
        var summary = FieldSummary(product: .phoneCheck)
        summary.add(Self.run(.verified, checkURLMs: 12))
        let text = FieldSummary.prometheus([summary])
        #expect(text.contains("cellpath_check_runs{product=\"phone_check\",outcome=\"verified\"} 1\n"), "\(text)")
        #expect(!text.contains("modem="))
    }

    @Test func secondsPrintWithoutFloatingPointNoise() {
        // 13.7 / 1000 is 0.013699999999999999 in binary floating point.
        #expect(FieldSummary.seconds(13.7) == "0.0137")
        #expect(FieldSummary.seconds(0.1 + 0.2) == "0.0003")
        #expect(FieldSummary.seconds(1234.5678) == "1.234568")
        var summary = FieldSummary(product: .subscriberCheck)
        summary.add(Self.run(.verified, checkURLMs: 13.7))
        summary.add(Self.run(.verified, checkURLMs: 13.7))
        let text = FieldSummary.prometheus([summary])
        #expect(
            text.contains(
                "cellpath_check_step_seconds{product=\"subscriber_check\",step=\"check_url\",quantile=\"0.5\"} 0.0137\n"
            ), "\(text)")
        #expect(
            text.contains("cellpath_check_step_seconds_sum{product=\"subscriber_check\",step=\"check_url\"} 0.0274\n"),
            "\(text)")
        let values = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap {
            $0.split(separator: " ").last
        }
        #expect(values.allSatisfy { $0.count <= 12 }, "\(values)")
    }
}

/// Field mode's run loop.
@Suite struct FieldRunTests {
    /// Counts the calls of a lane's `finally`.
    private actor Releases {
        private(set) var count = 0
        func add() { count += 1 }
    }

    /// The runs stop with exit 73 and the summary so far (one JSON line, as field mode prints it),
    /// and the lane's bearer is still released.
    @Test func aMetricsFileThatCannotBeWrittenStopsTheRunsButStillReleasesTheBearer() async throws {
        let context = CommandContext.quietSubscriberCheck
        let field = FieldRun(
            product: .subscriberCheck, runs: 3, interval: nil, metricsFile: "/nonexistent-cellpath-dir/metrics.prom",
            context: context)
        let releases = Releases()
        let lane = FieldRun.Lane(
            modem: nil,
            once: {
                var report = CheckRunReport(
                    product: .subscriberCheck, phoneNumber: "+447940448591", backend: "test", apiVersion: .v0_2)
                report.outcome = .verified
                return report
            }, finally: { await releases.add() })
        let outcome = try await field.run([lane])
        #expect(await releases.count == 1)
        #expect(outcome.exitStatus == ExitCode.cannotCreate.rawValue)
        #expect(outcome.failure?.error.message.contains("/nonexistent-cellpath-dir/metrics.prom") == true)
        #expect(outcome.output?.record["runs"] == .int(1))
        #expect(outcome.output?.jsonOnOneLine == true)
    }
}
