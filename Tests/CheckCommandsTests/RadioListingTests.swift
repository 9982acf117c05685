import CellpathCore
import Testing
import Workflow

@testable import CheckCommands
@testable import CommandLineKit

/// The radio context in a check's JSON, the field summary's breakdown per network and
/// technology, and the metrics file's signal gauges.
@Suite struct RadioListingTests {
    static func radio(_ operatorID: String?, _ rat: AccessTechnology?, rsrp: Double? = nil) -> RadioContext {
        var radio = RadioContext(source: "qmi")
        radio.servingOperator = operatorID.map { NetworkOperator(id: $0, name: "Net \($0)") }
        radio.accessTechnology = rat
        radio.rsrpDbm = rsrp
        return radio
    }

    static func run(_ radio: RadioContext?, failed: Bool = false) -> CheckRunReport {
        var report = CheckRunReport(
            product: .subscriberCheck, phoneNumber: "+447940448591", backend: "test", apiVersion: .v0_2)
        report.radio = radio
        if failed { report.failure = CellpathError(.unavailable, "no bearer") } else { report.outcome = .verified }
        return report
    }

    @Test func theRecordCarriesOnlyWhatTheModemTold() throws {
        var radio = Self.radio("234-15", .lte, rsrp: -88)
        radio.cellID = 19_088_743
        radio.areaCode = 4660
        radio.band = "B20"
        let record = try CheckListing.record(Self.run(radio), .redacted)
        let json = try #require(JSONValue.parse(Array(JSONWriter.line(.record(record)).utf8)))
        let written = try #require(json["radio"])
        #expect(written[string: "source"] == "qmi")
        #expect(written[string: "rat"] == "lte")
        #expect(written[string: "operator"] == "234-15")
        #expect(written[string: "operator_name"] == "Net 234-15")
        #expect(written["cell_id"]?.intValue == 19_088_743)
        #expect(written["tac"]?.intValue == 4660)
        #expect(written["lac"] == nil)
        #expect(written[string: "band"] == "B20")
        #expect(written["rsrp_dbm"] == .double(-88) || written["rsrp_dbm"] == .int(-88))
        for absent in ["roaming", "pci", "channel", "rssi_dbm", "rsrq_db", "sinr_db", "ss_rsrp_dbm", "ss_sinr_db"] {
            #expect(written[absent] == nil, "\(absent)")
        }
        let without = try CheckListing.record(Self.run(nil), .redacted)
        #expect(without["radio"] == .null)
    }

    @Test func theSummaryBreaksRunsDownPerNetworkAndTechnology() throws {
        var summary = FieldSummary(product: .subscriberCheck)
        summary.add(Self.run(Self.radio("234-15", .lte)))
        summary.add(Self.run(Self.radio("234-15", .lte), failed: true))
        summary.add(Self.run(Self.radio("234-15", .umts)))
        summary.add(Self.run(Self.radio(nil, nil)))
        summary.add(Self.run(nil))
        #expect(
            summary.byRadio == [
                .init(operatorID: "234-15", rat: "lte", runs: 2, concluded: 1),
                .init(operatorID: "234-15", rat: "umts", runs: 1, concluded: 1),
                .init(operatorID: "unknown", rat: "unknown", runs: 1, concluded: 1),
                .init(operatorID: "none", rat: "none", runs: 1, concluded: 1)
            ])
        guard case .list(let groups) = summary.record["radio"], case .record(let first) = groups.first else {
            Issue.record("no radio breakdown")
            return
        }
        #expect(first["success_rate"] == .fraction(0.5))
    }

    @Test func theMetricsCarryTheLastSignalPerModem() {
        var first = FieldSummary(product: .subscriberCheck, modem: 0)
        first.add(Self.run(Self.radio("234-15", .lte, rsrp: -90)))
        first.add(Self.run(Self.radio("234-15", .lte, rsrp: -101)))
        var second = FieldSummary(product: .subscriberCheck, modem: 1)
        second.add(Self.run(Self.radio("234-20", .umts)))
        let text = FieldSummary.prometheus([first, second])
        #expect(
            text.contains(
                "cellpath_radio_rsrp_dbm{product=\"subscriber_check\",modem=\"0\",operator=\"234-15\",rat=\"lte\"} -101.0\n"
            ), "\(text)")
        #expect(!text.contains("modem=\"1\",operator"))
        #expect(!text.contains("cellpath_radio_sinr_db"))
    }
}
