import CellpathCore
import Testing

@testable import CellpathCLI
@testable import CommandLineKit

/// Field mode's `--position`, `--records-file` and `--resume` on the checks.
@Suite struct FieldOptionsTests {
    private static func field(_ arguments: [String]) throws -> FieldOptions? {
        guard case .run(_, let invocation) = try CommandLineParser(root: CommandTree.root).parse(arguments) else {
            return nil
        }
        return try invocation.options(as: DeviceCheckOptions.self).field
    }

    @Test func aPositionIsReadInDecimalDegrees() throws {
        let field = try #require(
            try Self.field(["subscriber-check", "+447940448591", "--position", "51.5072, -0.1276"]))
        #expect(field.position == GeoPosition(latitude: 51.5072, longitude: -0.1276))
        #expect(field.entersFieldMode)
    }

    @Test func recordsFileAndResumeAreRead() throws {
        let field = try #require(
            try Self.field(["phone-check", "+447940448591", "--records-file", "runs.jsonl", "--resume"]))
        #expect(field.recordsFile == "runs.jsonl")
        #expect(field.resume)
        #expect(field.entersFieldMode)
        #expect(try Self.field(["phone-check", "+447940448591"])?.entersFieldMode == false)
    }

    @Test(arguments: [
        "91,0", "0,180.5", "-90.1,0", "nan,0", "inf,0", "1e3,0", "0x1p3,0", "51.5", "51.5,-0.1,3", ",", "a,b", ""
    ])
    func aPositionThatCannotBeIsRefused(text: String) {
        #expect(
            throws: UsageError(
                "invalid position '\(text)' for '--position': expected latitude,longitude in decimal degrees (-90 to 90, -180 to 180), e.g. 51.5072,-0.1276",
                command: ["cellpath", "subscriber-check"])
        ) {
            try CommandLineParser(root: CommandTree.root).parse(["subscriber-check", "--position", text])
        }
    }

    @Test func theGlobesEdgesAreAccepted() {
        #expect(GeoPosition(parsing: "-90,180") == GeoPosition(latitude: -90, longitude: 180))
        #expect(GeoPosition(parsing: "+0.5,-180") == GeoPosition(latitude: 0.5, longitude: -180))
    }
}
