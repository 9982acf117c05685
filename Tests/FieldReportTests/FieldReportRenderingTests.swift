import CellpathCore
import Glibc
import SystemSupport
import TestSupport
import Testing

@testable import FieldReport

/// The renderings: CSV quoting and formula defusing, personal data masked, HTML that no record
/// can break out of, Chart.js missing.
@Suite struct FieldReportRenderingTests {
    static func record(_ line: String) throws -> FieldRecord {
        try #require(FieldLines.read(line + "\n").1.first)
    }

    @Test func csvHasAStableHeaderAndOneRowPerCheck() throws {
        #expect(
            FieldReportCSV.header
                == "modem,run,started_at,product,phone_number,outcome,failure,failed_step,error,path_ms,create_ms,"
                + "check_url_ms,complete_ms,sim_check_ms,total_ms,interface,ipv4_address,operator_sent,radio_operator,"
                + "radio_rat,radio_cell_id,radio_band,radio_rsrp_dbm,lat,lon,check_id\r\n")
        let radio: [(String, JSONValue)] = [
            ("radio", .object([("operator", .string("EE")), ("rsrp_dbm", .int(-95))])),
            ("position", .object([("lat", .double(51.5)), ("lon", .double(-0.125))]))
        ]
        let row = FieldReportCSV.row(
            try Self.record(FieldLines.check(run: 2, modem: 1, startedAt: 1_796_097_600.25, extra: radio)), .redacted)
        #expect(
            row
                == "1,2,2026-12-01T04:00:00.250Z,subscriber_check,+••••91,verified,,,,150,120,100,80,,400,wwan0,••••10,,"
                + "EE,,,,-95,51.5,-0.125,\r\n")
    }

    /// `--location`'s GNSS position is read as `--position`'s is: its latitude and longitude,
    /// whatever else it carries.
    @Test func aGNSSPositionIsReadAsAFixedOneIs() throws {
        let gnss: [(String, JSONValue)] = [
            (
                "position",
                .object([
                    ("lat", .double(48.8584)), ("lon", .double(2.2945)), ("source", .string("gnss")),
                    ("accuracy_m", .int(8)), ("fix_time", .int(1_796_097_598)), ("age_s", .double(2.25))
                ])
            )
        ]
        let record = try Self.record(FieldLines.check(run: 1, extra: gnss))
        #expect(record.position?.lat == 48.8584)
        #expect(record.position?.lon == 2.2945)
        #expect(FieldReportCSV.row(record, .redacted).contains(",48.8584,2.2945,"))
    }

    @Test func csvQuotesAsRFC4180AndDefusesFormulas() throws {
        #expect(FieldReportCSV.Cell.text("a, \"b\"").field == "\"a, \"\"b\"\"\"")
        #expect(FieldReportCSV.Cell.text("line\nbreak").field == "\"line\nbreak\"")
        #expect(FieldReportCSV.Cell.text("=HYPERLINK(\"http://x\")").field == "\"'=HYPERLINK(\"\"http://x\"\")\"")
        for formula in ["+1+1", "-1+1", "@SUM(A1)", "\tx", "\rx"] {
            let field = FieldReportCSV.Cell.text(formula).field
            #expect(field.hasPrefix("'") || field.hasPrefix("\"'"), "\(formula)")
        }
        #expect(FieldReportCSV.Cell.text("plain").field == "plain")
        #expect(FieldReportCSV.Cell.text("+447940448591").field == "+447940448591", "a phone number is data")
        #expect(FieldReportCSV.Cell.text("+••••91").field == "+••••91")
        #expect(FieldReportCSV.Cell.number("-95").field == "-95", "a number cellpath wrote is no formula")
        // A record's text gets the same treatment.
        let hostile: [(String, JSONValue)] = [("radio", .object([("operator", .string("=cmd|' /C calc'!A0"))]))]
        let row = FieldReportCSV.row(try Self.record(FieldLines.check(run: 1, extra: hostile)), .redacted)
        #expect(row.contains(",'=cmd|' /C calc'!A0,"), "\(row)")
    }

    @Test func personalDataIsMaskedUnlessFullDisclosureAndNeverMaskedTwice() throws {
        let full = try Self.record(FieldLines.check(run: 1, phoneNumber: "+447940448591"))
        #expect(FieldReportCSV.row(full, .redacted).contains(",+••••91,"))
        #expect(FieldReportCSV.row(full, .redacted).contains(",••••10,"), "the bearer address is masked")
        #expect(FieldReportCSV.row(full, .full).contains(",+447940448591,"))
        #expect(FieldReportCSV.row(full, .full).contains(",100.64.23.10,"))
        let masked = try Self.record(FieldLines.check(run: 1, phoneNumber: "+••••91"))
        #expect(FieldReportCSV.row(masked, .redacted).contains(",+••••91,"))
        #expect(PersonalDataMask.mask("001010123456789", as: .imsi, .redacted) == "••••89")
    }

    @Test func recordTextCannotBreakOutOfThePagesScript() throws {
        let attack = "</script><script>alert(1)</script><!-- & \u{2028}"
        let hostile: [(String, JSONValue)] = [("radio", .object([("operator", .string(attack))]))]
        let figures = try FieldLines.figures([
            FieldLines.check(run: 1, extra: hostile), FieldLines.check(run: 2, outcome: nil, failure: attack)
        ])
        let page = FieldReportHTML.page(figures, sources: ["</script>.jsonl"], chartJS: "/* chart.js */")
        #expect(!page.contains("<script>alert"))
        #expect(!page.contains("<!--"))
        // The only script ends are the page's own: Chart.js, the data, the code.
        #expect(page.ranges(of: "</script>").count == 3)
        // The data block reads back to the same text.
        let start = try #require(page.firstRange(of: "<script type=\"application/json\" id=\"report-data\">"))
        let end = try #require(page[start.upperBound...].firstRange(of: "</script>"))
        let data = try #require(JSONValue.parse(Array(page[start.upperBound ..< end.lowerBound].utf8)))
        #expect(data["groups"]?["operator"]?.arrayValue?.first?[string: "key"] == attack)
        #expect(data["failures"]?.arrayValue?.first?[string: "reason"] == attack)
        #expect(data["sources"] == .array([.string("</script>.jsonl")]))
        #expect(data["checks"] == figures.json["checks"], "the page shows the JSON report's figures")
    }

    @Test func chartJSIsInlinedSafelyOrItsPackageIsNamed() throws {
        try TemporaryDirectory.with("cellpath-report") { directory in
            let missing = try #require(throws: CellpathError.self) {
                try FieldReportHTML.chartJS(at: "\(directory)/chart.min.js")
            }
            #expect(missing.kind == .unavailable)
            #expect((missing.hint ?? "").contains("libjs-chart.js"))
            try FileSystem.write(Array("var s = \"</script>\";".utf8), to: "\(directory)/chart.min.js")
            #expect(try FieldReportHTML.chartJS(at: "\(directory)/chart.min.js") == "var s = \"<\\/script>\";")
        }
    }
}
