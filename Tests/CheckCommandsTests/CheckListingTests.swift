import CellpathCore
import Testing
import Workflow

@testable import CheckCommands
@testable import CommandLineKit

/// The check commands' human output speaks one language: `[command] …` lines, networks as
/// MCC-MNC, steps named as in JSON.
@Suite struct CheckListingTests {
    static func coverageReport() throws -> CoverageReport {
        var report = CoverageReport(backend: "tru.ID API https://api.truid.test")
        report.path = CellularPath(
            interfaceName: "wwan0", ipv4Address: "100.64.23.10", dnsServers: ["100.64.0.53"],
            operatorID: "001-01", modemBackend: "mbim")
        report.coverage = try #require(
            JSONValue.parse(
                Array(
                    """
                    {"network_id": "00101", "network_name": "cellpath sim", "country_code": "GB", "mobile_data_ip": "100.64.23.10",
                     "products": [{"product_id": "PCK", "product_name": "Phone Check"}, {"product_id": "SUK", "product_name": "Subscriber Check"}]}
                    """.utf8)))
        report.steps = [
            CheckStepTiming(step: "coverage_token", startMs: 0, durationMs: 74.8, succeeded: true),
            CheckStepTiming(step: "path", startMs: 0, durationMs: 146.6, succeeded: true),
            CheckStepTiming(step: "coverage", startMs: 146.6, durationMs: 331.1, succeeded: true)
        ]
        report.totalMs = 487.6
        return report
    }

    /// The answer is the result (stdout); what led to it is details (stderr), as the checks print them.
    @Test func coverageReadsLikeTheChecks() throws {
        let outcome = CoverageListing.outcome(try Self.coverageReport(), .full)
        let output = try #require(outcome.output)
        #expect(
            Renderer(json: false, color: false).render(output) == """
                network 001-01 (cellpath sim, GB), mobile data IP 100.64.23.10: Phone Check, Subscriber Check

                """)
        #expect(
            output.details == [
                "[coverage] via tru.ID API https://api.truid.test",
                "[coverage] cellular path: wwan0 100.64.23.10, DNS 100.64.0.53, operator 001-01",
                "[coverage] steps: coverage_token 75 ms, path 147 ms, coverage 331 ms; total 488 ms"
            ])
    }

    @Test func coverageJSONKeepsTheAPIsNetworkID() throws {
        let outcome = CoverageListing.outcome(try Self.coverageReport(), .full)
        let json = Renderer(json: true, color: false).render(try #require(outcome.output))
        #expect(json.contains("\"network_id\": \"00101\""))
    }

    @Test func networkIDsAsMCCMNC() {
        #expect(CoverageListing.operatorID("23415") == "234-15")
        #expect(CoverageListing.operatorID("310260") == "310-260")
        #expect(CoverageListing.operatorID("unknown") == "unknown")
    }

    @Test func fieldSummaryNamesStepsAsJSONDoes() {
        var summary = FieldSummary(product: .subscriberCheck)
        var report = CheckRunReport(
            product: .subscriberCheck, phoneNumber: "+447940448591", backend: "b", apiVersion: .v0_2)
        report.steps = [CheckStepTiming(step: "check_url", startMs: 0, durationMs: 10, succeeded: true)]
        report.outcome = .verified
        summary.add(report)
        let text = Renderer(json: false, color: false).render(Output(summary.record))
        #expect(text.contains("  check_url:"), "\(text)")
        #expect(!text.contains("check url"), "\(text)")
    }
}
