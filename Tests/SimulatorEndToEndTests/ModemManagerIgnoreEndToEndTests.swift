import CellpathCore
import FoundationEssentials
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// `--backend auto` next to a ModemManager that ignores a modem by udev's
/// `ID_MM_DEVICE_IGNORE=1` (scenario `modemManagerIgnore`): that modem through cellpath's own
/// client, the other through ModemManager, and a modem ModemManager merely does not list still
/// refused with ModemManager's error.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ModemManagerIgnoreEndToEndTests {
    /// The MBIM modem 0 through ModemManager and the QMI modem 1 that ModemManager ignores.
    static var scenario: Scenario {
        var scenario = Scenario.builtIn
        scenario.modems = [SimulatedModem(index: 0), SimulatedModem(index: 1)]
        scenario.modems[1].protocol = .qmi
        scenario.modems[1].modemManagerIgnore = true
        scenario.modemManager = true
        return scenario
    }

    @Test func theIgnoredModemGoesThroughItsOwnClientAndTheOtherThroughModemManager() throws {
        let scenario = Self.scenario
        try SimulatedDevice.with(scenario, connect: false) { device in
            // ModemManager lists only modem 0.
            let listedByMM = try device.run(["mmcli", "-L"])
            #expect(listedByMM.stdout.components(separatedBy: "/Modem/").count == 2, "\(listedByMM.stdout)")

            let listed = try device.cellpath(["modems", "--json"])
            #expect(listed.status == 0, "\(listed.stderr)")
            let modems = try JSONValue.parse(listed.stdout)["modems"]?.array ?? []
            #expect(modems.map { $0["backend"]?.string } == ["modemmanager", "qmi"], "\(listed.stdout)")
            #expect(modems.allSatisfy { $0["error"] == .null }, "\(listed.stdout)")
            #expect(modems.first?["note"] == .null)
            #expect(modems.last?["note"]?.string?.contains("ModemManager ignores it") == true, "\(listed.stdout)")
            let table = try device.cellpath(["modems"])
            #expect(table.stdout.contains("modem 1: ModemManager ignores it"), "\(table.stdout)\(table.stderr)")

            let up = try device.cellpath(["bearer", "up", "-m", "1", "--backend", "auto", "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            #expect(try JSONValue.parse(up.stdout)["backend"]?.string == "qmi", "\(up.stdout)")
            #expect(try device.status()["modems"]?.array?[1]["bearer"]?.string == "connected")
            let down = try device.cellpath(["bearer", "down", "-m", "1", "--json"])
            #expect(down.status == 0, "\(down.stderr)")
            #expect(try JSONValue.parse(down.stdout)["backend"]?.string == "qmi", "\(down.stdout)")

            let fetch = try device.cellpath(["fetch", "-m", "1", "--json", "http://mno.carrier.test/"])
            // The carrier's page has no check behind it (65): what matters is the path it took.
            #expect(fetch.status == 65, "\(fetch.stderr)")
            #expect(
                try JSONValue.parse(fetch.stdout).hops.first?["local_address"]?.string == "100.64.23.11",
                "\(fetch.stderr)")

            let number = try #require(scenario.modems[1].sim?.msisdn)
            let check = try device.cellpath(["subscriber-check", number, "-m", "1", "--direct", "--json"])
            #expect(check.status == 0, "\(check.stderr)")
            #expect(try JSONValue.parse(check.stdout)["outcome"]?.string == "verified", "\(check.stdout)")
            #expect(try device.status()["modems"]?.array?[1]["bearer"]?.string == "disconnected")

            // Modem 0 still goes through ModemManager.
            let other = try device.cellpath(["bearer", "up", "-m", "0", "--json"])
            #expect(other.status == 0, "\(other.stderr)")
            #expect(try JSONValue.parse(other.stdout)["backend"]?.string == "modemmanager", "\(other.stdout)")
            #expect(try device.cellpath(["bearer", "down", "-m", "0"]).status == 0)
        }
    }

    /// Without the udev mark where cellpath reads it, modem 1 is one that ModemManager merely
    /// does not list: auto still goes to ModemManager and fails with its error, never direct.
    @Test func aModemModemManagerMerelyDoesNotListIsStillRefused() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let root = try #require(try device.environment()["CELLPATH_UDEV_ROOT"])
            let entry = "\(root)/data/+usb:1-2"
            #expect(FileSystem.exists(entry), "the world marks the ignored modem's USB device")
            #expect(unlink(entry) == 0)

            let up = try device.cellpath(["bearer", "up", "-m", "1"])
            #expect(up.status == 69, "\(up.stderr)")
            #expect(
                up.stderr.contains("ModemManager does not manage a modem with port cdc-wdm1"), "\(up.stderr)")
            #expect(up.stderr.contains("--backend qmi"), "\(up.stderr)")
            #expect(try device.status()["modems"]?.array?[1]["bearer"]?.string == "disconnected")
        }
    }
}
