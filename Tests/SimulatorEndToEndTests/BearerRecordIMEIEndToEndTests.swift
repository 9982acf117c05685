import CellpathCore
import Foundation
import Glibc
import SimulatorScenario
import TestSupport
import Testing

/// A bearer record keeps the modem's IMEI: when the modem re-enumerated under another physical
/// device path (its record left under the old, gone one), `bearer status` and `bearer down` find
/// the record by the IMEI; a record of another IMEI is not taken. The IMEI is never printed.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct BearerRecordIMEIEndToEndTests {
    /// The one record file in `directory`.
    static func recordFile(_ directory: String) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.hasPrefix("bearer-") && $0.hasSuffix(".json")
        }
        return directory + "/" + (try #require(names.count == 1 ? names.first : nil, "\(names)"))
    }

    /// Moves the record at `file` to where the modem would have left it under the device path
    /// `gone` (which does not exist), with `imei`; returns the new file.
    static func leave(_ file: String, under gone: String, imei: String) throws -> String {
        let data = try #require(FileManager.default.contents(atPath: file))
        var record = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        record["device"] = gone
        record["imei"] = imei
        let moved =
            (file as NSString).deletingLastPathComponent + "/bearer-"
            + gone.split(separator: "/").joined(separator: "-") + ".json"
        #expect(unlink(file) == 0)
        #expect(
            FileManager.default.createFile(
                atPath: moved, contents: try JSONSerialization.data(withJSONObject: record),
                attributes: [.posixPermissions: 0o600]))
        return moved
    }

    @Test func aModemReEnumeratedUnderAnotherDevicePathFindsItsRecordByItsIMEI() throws {
        try SimulatedDevice.with(connect: false) { device in
            let up = try device.cellpath(["bearer", "up", "-m", "0", "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            let state = try #require(try device.environment()["CELLPATH_STATE_DIR"])
            let file = try Self.recordFile(state)
            let record = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
            let imei = try #require(record["imei"] as? String, "the record keeps the IMEI: \(record)")
            let listed = try JSONValue.parse(device.cellpath(["modems", "--json", "--verbose-full"]).stdout)
            #expect(listed["modems"]?.array?[0]["imei"]?.string == imei)
            let device0 = try #require(record["device"] as? String)
            let gone = device0 + "-before"

            // Another modem's IMEI: the record is not taken.
            let other = try Self.leave(file, under: gone, imei: "359876543210983")
            let foreign = try device.cellpath(["bearer", "status", "-m", "0", "--json"])
            #expect(foreign.status == 0, "\(foreign.stderr)")
            #expect(try JSONValue.parse(foreign.stdout)["brought_up_by"] == .null, "\(foreign.stdout)")
            #expect(access(other, F_OK) == 0)

            // Its own IMEI: bearer status finds it, the record moves back to the modem's name.
            let moved = try Self.leave(other, under: gone, imei: imei)
            let status = try device.cellpath(["bearer", "status", "-m", "0", "--json", "-v"])
            #expect(status.status == 0, "\(status.stderr)")
            #expect(try JSONValue.parse(status.stdout)["brought_up_by"]?.string == "cellpath", "\(status.stdout)")
            #expect(access(moved, F_OK) != 0 && access(file, F_OK) == 0)
            #expect(!status.stdout.contains(imei) && !status.stderr.contains(imei), "the IMEI is masked")

            // bearer down takes what cellpath set up down, found the same way.
            _ = try Self.leave(file, under: gone, imei: imei)
            let down = try device.cellpath(["bearer", "down", "-m", "0", "--json"])
            #expect(down.status == 0, "\(down.stderr)")
            let result = try JSONValue.parse(down.stdout)
            #expect(result["bearer"]?.string == "disconnected", "\(down.stdout)")
            #expect(result["configuration_removed"] == .bool(true), "\(down.stdout)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.hasSuffix(".json") } == [])
        }
    }
}
