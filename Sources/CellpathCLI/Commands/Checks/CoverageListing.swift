import CellpathCore
import Workflow

/// How `coverage` prints its report.
package enum CoverageListing {
    package static func outcome(_ report: CoverageReport, _ disclosure: Disclosure) -> CommandOutcome {
        var record = Record()
        record.add("backend", .string(report.backend))
        record.add("path", report.path.map { CheckListing.pathValue($0, disclosure) } ?? .null)
        let coverage = report.coverage
        record.add("network_id", .optional(coverage?[string: "network_id"]), label: "network")
        record.add("network_name", .optional(coverage?[string: "network_name"]), label: "network name")
        record.add("country_code", .optional(coverage?[string: "country_code"]), label: "country")
        record.add("mobile_data_ip", .optional(coverage?[string: "mobile_data_ip"].map { disclosure.reveal($0, as: .ipAddress) }),
                   label: "mobile data IP")
        record.add("products", .list(report.products.map { product in
            var fields = Record()
            fields.add("product_id", .string(product.id))
            fields.add("product_name", .string(product.name))
            return .record(fields)
        }))
        record.add("steps", CheckListing.stepsValue(report.steps, withStart: false))
        record.add("total_ms", .double(report.totalMs))
        let title = coverage.map { "network \($0[string: "network_id"] ?? "?") (\($0[string: "network_name"] ?? "unnamed")): "
            + (report.products.isEmpty ? "no products" : report.products.map(\.name).joined(separator: ", ")) }
        let output = Output(title: title, record)
        if let failure = report.failure { return CommandOutcome(output, failure: CommandFailure(failure)) }
        return CommandOutcome(output)
    }
}
