import CellpathCore
import FoundationEssentials
import Glibc
import Simulator
import SimulatorScenario
import TestSupport
import Testing

/// The real ModemManager on MBIM device profiles, in one world: an MBIMEx v3 modem it connects,
/// an FCC-locked one it unlocks with its fcc-unlock.d script, an eSIM without profile it marks
/// failed, a dual-SIM modem whose slots it lists and switches, and a t7xx modem, unlocked through
/// the control socket, whose link-local IPv6 address sends it to SLAAC/DHCP.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ModemManagerProfilesEndToEndTests {
    static var scenario: Scenario {
        var scenario = Scenario.builtIn
        scenario.modems = (0 ..< 5).map { SimulatedModem(index: $0) }
        scenario.modems[0].device = .usbMBIMv3
        scenario.modems[1].device = .usbMBIMFCCLocked
        scenario.modems[2].device = .dualSIM
        scenario.modems[2].secondSlot = SecondSIMSlot(esim: true, sim: nil)
        scenario.modems[2].activeSlot = 2
        scenario.modems[3].device = .dualSIM
        var profile = SimulatedSIM(index: 7)
        profile.iccid = "8988247000000000077"
        scenario.modems[3].secondSlot = SecondSIMSlot(esim: true, sim: profile)
        scenario.modems[4].device = .pcieT7xx
        scenario.modems[4].ipType = .ipv4v6
        scenario.modemManager = true
        return scenario
    }

    @Test func modemManagerSeesMBIMExTheFCCLockTheESIMWithoutProfileTheSlotsAndTheT7xxLinkLocalAddress() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let modems = try waitForModems(device, count: 5)
            let log = "\(RunDirectory(prefix: device.prefix).modemManagerDirectory)/ModemManager.log"

            // MBIMEx v3: ModemManager negotiates it and connects with the v3 layouts.
            let v3 = try #require(modems["cdc-wdm0"])
            let connect = try device.run(["mmcli", "-m", v3, "--simple-connect=apn=internet"])
            #expect(connect.status == 0, "\(connect.stdout) \(connect.stderr)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "connected")
            #expect(Self.text(log)?.contains("extended version 3.00") == true)

            // FCC lock: radio-on refused; ModemManager runs the fcc-unlock.d script for 1199:9079
            // (qmicli's DMS Set FCC Authentication over MBIM), powers up and connects.
            let locked = try #require(modems["cdc-wdm1"])
            let enable = try device.run(["mmcli", "-m", locked, "--enable"])
            #expect(enable.status == 0, "\(enable.stdout) \(enable.stderr)")
            let shown = try device.run(["mmcli", "-m", locked]).stdout
            #expect(Self.value("power state", in: shown) == "on", "\(shown)")
            #expect(Self.text(log)?.contains("attempting fcc unlock") == true)

            // eSIM without profile: FAILED, reason esim-without-profiles.
            let esim = try #require(modems["cdc-wdm2"])
            let failed = try device.run(["mmcli", "-m", esim]).stdout
            #expect(Self.value("state", in: failed) == "failed", "\(failed)")
            #expect(Self.value("failed reason", in: failed) == "esim-without-profiles", "\(failed)")

            // Dual SIM: both slots listed; switching to the eSIM re-creates the modem on it.
            let dual = try #require(modems["cdc-wdm3"])
            let slots = try device.run(["mmcli", "-m", dual]).stdout
            #expect(slots.contains("slot 1:") && slots.contains("(active)") && slots.contains("slot 2:"), "\(slots)")
            let switched = try device.run(["mmcli", "-m", dual, "--set-primary-sim-slot=2"])
            #expect(switched.status == 0, "\(switched.stdout) \(switched.stderr)")
            let recreated = try #require(try waitForModems(device, count: 5)["cdc-wdm3"])
            let recreatedShown = try device.run(["mmcli", "-m", recreated]).stdout
            let sim = try #require(Self.value("primary sim path", in: recreatedShown), "\(recreatedShown)")
            let card = try device.run(["mmcli", "-i", sim]).stdout
            #expect(Self.value("iccid", in: card) == "8988247000000000077", "\(card)")

            // t7xx: FCC-locked (no script for it in ModemManager 1.20); unlocked through the
            // control socket, it connects, and its link-local IPv6 address makes the method DHCP.
            let t7xx = try #require(modems["wwan4mbim0"])
            try SimulatedWorld.unlockFCC(modem: 4, prefix: device.prefix)
            let dualStack = try device.run(["mmcli", "-m", t7xx, "--simple-connect=apn=internet,ip-type=ipv4v6"])
            #expect(dualStack.status == 0, "\(dualStack.stdout) \(dualStack.stderr)")
            let bearers = try device.run(["mmcli", "-m", t7xx]).stdout
            let bearer = try #require(Self.value("paths", in: bearers), "\(bearers)")
            let ipv6 = Self.section("IPv6 configuration", in: try device.run(["mmcli", "-b", bearer]).stdout)
            #expect(Self.value("method", in: ipv6) == "dhcp", "\(ipv6)")
            #expect(Self.value("address", in: ipv6) == "fe80::2", "\(ipv6)")
        }
    }

    /// Waits (up to 60 s) until ModemManager lists `count` modems; returns their paths by primary port.
    private func waitForModems(_ device: SimulatedDevice, count: Int) throws -> [String: String] {
        var found: [String: String] = [:]
        for _ in 0 ..< 60 {
            found = [:]
            let list = try device.run(["mmcli", "-L"]).stdout
            let paths = list.split(whereSeparator: { $0 == " " || $0 == "\n" })
            for path in paths where path.hasPrefix("/org/freedesktop/ModemManager1/Modem/") {
                let shown = try device.run(["mmcli", "-m", String(path)]).stdout
                if let port = Self.value("primary port", in: shown) { found[port] = String(path) }
            }
            if found.count == count { return found }
            sleep(1)
        }
        Issue.record("ModemManager listed \(found)")
        return found
    }

    /// The value of `label: value` in mmcli's output (the first such line), without its colours.
    private static func value(_ label: String, in output: String) -> String? {
        for line in withoutColours(output).split(separator: "\n") {
            let fields = line.split(separator: "|", maxSplits: 1).last ?? line[...]
            let parts = fields.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: " ") == label else { continue }
            return parts[1].trimmingCharacters(in: " ").filter { $0 != "'" }
        }
        return nil
    }

    /// The lines of mmcli's section `title` (from its title line to the next title).
    private static func section(_ title: String, in output: String) -> String {
        var lines: [Substring] = [], inside = false
        for line in output.split(separator: "\n") {
            let head = line.split(separator: "|", maxSplits: 1).first?.trimmingCharacters(in: " ") ?? ""
            if !head.isEmpty { inside = head == title }
            if inside { lines.append(line) }
        }
        return lines.joined(separator: "\n")
    }

    /// `text` without ANSI colour sequences (ESC [ … m), which mmcli adds to states.
    private static func withoutColours(_ text: String) -> String {
        var out = "", escaped = false
        for character in text {
            if character == "\u{1B}" {
                escaped = true
            } else if escaped {
                escaped = character != "m"
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// A file's text, or nil when it cannot be read.
    private static func text(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
