import CellpathCLI
import CellpathCore
import CommandLineKit
import Workflow

/// How `coverage` prints its report: a record for JSON (docs/json.md) and, for people, lines in
/// the check commands' shape (`[coverage] …`, then the answer).
package enum CoverageListing {
    package static func outcome(_ report: CoverageReport, _ disclosure: Disclosure) -> CommandOutcome {
        var record = Record()
        record.add("backend", .string(report.backend))
        record.add("path", report.path.map { CheckListing.pathValue($0, disclosure) } ?? .null)
        let coverage = report.coverage
        record.add("network_id", .optional(coverage?[string: "network_id"]), label: "network")
        record.add("network_name", .optional(coverage?[string: "network_name"]), label: "network name")
        record.add("country_code", .optional(coverage?[string: "country_code"]), label: "country")
        record.add(
            "mobile_data_ip",
            .optional(coverage?[string: "mobile_data_ip"].map { disclosure.reveal($0, as: .ipAddress) }),
            label: "mobile data IP")
        record.add(
            "products",
            .list(
                report.products.map { product in
                    var fields = Record()
                    fields.add("product_id", .string(product.id))
                    fields.add("product_name", .string(product.name))
                    return .record(fields)
                }))
        record.add("steps", CheckListing.stepsValue(report.steps, withStart: false))
        record.add("total_ms", .double(report.totalMs))
        let lines = humanLines(report, disclosure)
        let output = Output(record, humanLines: lines.answer.map { [$0] } ?? [], details: lines.details)
        if let failure = report.failure { return CommandOutcome(output, failure: CommandFailure(failure)) }
        return CommandOutcome(output)
    }

    /// What ran, the path and the steps (details, for stderr), and the answer (the result): the
    /// network (MCC-MNC, as the path's operator is written), its name and country, the bearer's
    /// address and the products.
    static func humanLines(_ report: CoverageReport, _ disclosure: Disclosure) -> (details: [String], answer: String?) {
        var lines = ["[coverage] via \(report.backend)"]
        if let path = report.path {
            lines.append(
                "[coverage] cellular path: \(path.interfaceName) \(path.ipv4Address ?? path.ipv6Address ?? "-"), "
                    + "DNS \(path.dnsServers.joined(separator: ", "))"
                    + (path.operatorID.map { ", operator \($0)" } ?? ""))
        }
        let steps = report.steps.map {
            "\($0.step) \(Int($0.durationMs.rounded())) ms\($0.succeeded ? "" : " (failed)")"
        }
        lines.append("[coverage] steps: \(steps.joined(separator: ", ")); total \(Int(report.totalMs.rounded())) ms")
        guard let coverage = report.coverage else { return (lines, nil) }
        let network = coverage[string: "network_id"].map(operatorID) ?? "?"
        let place = [coverage[string: "network_name"], coverage[string: "country_code"]].compactMap { $0 }.joined(
            separator: ", ")
        let address =
            coverage[string: "mobile_data_ip"].map { ", mobile data IP \(disclosure.reveal($0, as: .ipAddress))" } ?? ""
        return (
            lines,
            "network \(network)" + (place.isEmpty ? "" : " (\(place))") + address + ": "
                + (report.products.isEmpty ? "no products" : report.products.map(\.name).joined(separator: ", "))
        )
    }

    /// The API's network id (`23415`, MCC then MNC) as MCC-MNC (`234-15`); other text as it is.
    static func operatorID(_ networkID: String) -> String {
        guard networkID.count == 5 || networkID.count == 6, networkID.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return networkID
        }
        return "\(networkID.prefix(3))-\(networkID.dropFirst(3))"
    }
}
