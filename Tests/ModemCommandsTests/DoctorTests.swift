import Bearers
import CellpathCore
import Glibc
import ModemDiscovery
import SystemSupport
import Testing

@testable import CommandLineKit
@testable import ModemCommands

/// `cellpath doctor`'s check model and its rendering, and the checks that need no world: the
/// report's status and exit code, its JSON fields, the clock, capabilities, SIM, registration
/// and FCC-lock findings with their remedies, and masking.
@Suite struct DoctorTests {
    private static let modem = DiscoveredModem(
        index: 0, devicePath: "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.12",
        ports: [ControlPort(name: "cdc-wdm0", devicePath: "/dev/cdc-wdm0", protocol: .mbim)],
        interfaces: ["wwan0"], usbVendorID: "1199", usbProductID: "9079", model: "EM7455")

    private static func checks(_ status: ModemStatus, fccList: String = "/nonexistent") -> ModemChecks {
        ModemChecks(
            report: ModemReport(modem: modem, result: .success(status)), roots: DeviceRoots(),
            disclosure: .redacted, modemManager: false, records: BearerRecords(environment: [:]), fix: false,
            fccUnlockList: fccList)
    }

    @Test func theReportIsAsBadAsItsWorstCheckAndFailsWithExit1() {
        let passing = DoctorReport([DoctorCheck("clock", .pass, "ok"), DoctorCheck("backend", .skip, "none")])
        #expect(passing.status == .pass && passing.exitCode == .success)
        let warning = DoctorReport(passing.checks + [DoctorCheck("owners", modem: 0, .warn, "held")])
        #expect(warning.status == .warn && warning.exitCode == .success, "warnings do not fail")
        let strict = DoctorCheck("rp_filter", modem: 0, .fail, "strict", remedy: "loosen")
        let failing = DoctorReport(warning.checks + [strict])
        #expect(failing.status == .fail && failing.exitCode == .notVerified && failing.exitCode.rawValue == 1)
        #expect(failing.title == "doctor: 1 failed, 1 warning, 1 passed, 1 skipped")
    }

    @Test func jsonHasStableFieldsAndHumansGetEvidenceAndRemedy() throws {
        var check = DoctorCheck(
            "rp_filter", modem: 1, .fail, "strict", evidence: ["rp_filter = 1"],
            remedy: "doctor --fix")
        check.fixed = "rp_filter: 1 → 2"
        let output = DoctorReport([check, DoctorCheck("clock", .pass, "fine")]).output
        #expect(output.record.fields.map(\.key) == ["status", "counts", "checks"])
        #expect(output.record["status"] == .string("fail"))
        guard case .record(let counts)? = output.record["counts"] else { Issue.record("no counts"); return }
        #expect(counts["fail"] == .int(1) && counts["pass"] == .int(1) && counts["warn"] == .int(0))
        guard case .list(let checks)? = output.record["checks"], case .record(let first) = checks[0] else {
            Issue.record("no checks"); return
        }
        #expect(first.fields.map(\.key) == ["check", "modem", "status", "summary", "evidence", "remedy", "fixed"])
        #expect(first["modem"] == .int(1) && first["remedy"] == .string("doctor --fix"))
        if case .record(let second) = checks[1] { #expect(second["modem"] == .null && second["remedy"] == .null) }
        let lines = try #require(output.humanLines)
        #expect(lines[0] == "FAIL  rp_filter (modem 1): strict")
        #expect(lines.contains("      rp_filter = 1") && lines.contains("      remedy: doctor --fix"))
        #expect(lines.contains("      fixed: rp_filter: 1 → 2") && lines.last == "PASS  clock: fine")
    }

    @Test func anObviouslyWrongClockFailsAndAnUnsynchronisedOneWarns() {
        #expect(MachineChecks.clock(year: 1970, synchronised: true).status == .fail)
        let unsynchronised = MachineChecks.clock(year: 2031, synchronised: false)
        #expect(unsynchronised.status == .warn && unsynchronised.remedy?.contains("timedatectl") == true)
        #expect(MachineChecks.clock(year: 2031, synchronised: nil).status == .pass)
    }

    @Test func withoutCapNetAdminTheCallerIsWarnedWithTheRemedy() {
        let none = MachineChecks.capabilities(0, uid: 65534)
        #expect(none.status == .warn && none.remedy?.contains("sudo") == true)
        #expect(none.evidence.contains("CAP_NET_ADMIN: no"))
        let admin = MachineChecks.capabilities(Capability.netAdmin.mask, uid: 0)
        #expect(admin.status == .pass && admin.evidence.contains("CAP_NET_RAW: no"))
    }

    @Test func simAndRegistrationFindingsCarryTheirRemedies() {
        let locked = Self.checks(ModemStatus(sim: SIMStatus(state: .pinRequired, iccid: "8944110012345678901"))).sim()
        #expect(locked.status == .fail && locked.remedy?.contains("--pin-file") == true)
        #expect(locked.evidence.contains("ICCID: ••••01"), "masked: \(locked.evidence)")
        #expect(!locked.evidence.joined().contains("8944110012345678901"))
        let denied = Self.checks(ModemStatus(registration: Registration(state: .denied))).registration()
        #expect(denied.status == .fail && denied.modem == 0)
        let weak = Self.checks(ModemStatus(registration: Registration(state: .home), signal: Signal(rssiDbm: -110)))
        #expect(weak.registration().status == .warn)
    }

    @Test func simSlotsPassWithASIMInTheActiveSlotAndOtherwiseNameTheSlotThatHoldsOne() throws {
        func slots(_ contents: [SIMSlot.Content], active: Int) -> ModemStatus {
            let slots = contents.enumerated().map { SIMSlot(number: $0 + 1, content: $1, active: $0 + 1 == active) }
            return ModemStatus(sim: SIMStatus(state: .ready, slots: slots))
        }
        #expect(Self.checks(ModemStatus(sim: SIMStatus(state: .ready))).simSlots() == nil, "one slot: no finding")
        let fine = try #require(Self.checks(slots([.sim, .esimWithoutProfile], active: 1)).simSlots())
        #expect(fine.status == .pass && fine.remedy == nil)
        #expect(fine.evidence == ["slot 1: ready (active)", "slot 2: eSIM without an enabled profile"])
        let esimActive = try #require(Self.checks(slots([.empty, .esim, .unusable], active: 2)).simSlots())
        #expect(esimActive.status == .pass && esimActive.evidence.last == "slot 3: unusable")
        let empty = try #require(Self.checks(slots([.empty, .esim], active: 1)).simSlots())
        #expect(empty.status == .warn && empty.summary == "the active slot 1 is empty")
        #expect(empty.remedy == "use slot 2, which holds a SIM: cellpath bearer up --sim-slot 2")
        let none = try #require(Self.checks(slots([.esimWithoutProfile, .empty], active: 1)).simSlots())
        #expect(none.status == .warn && none.remedy == "insert a SIM, or enable an eSIM profile (lpac)")
    }

    @Test func aSIMOrRegistrationTheModemDidNotReportWarnsWithTheCommandThatAsks() {
        let unreported = Self.checks(ModemStatus())
        let sim = unreported.sim(), registration = unreported.registration()
        #expect(sim.status == .warn && registration.status == .warn)
        #expect(sim.remedy?.hasSuffix("mbimcli -p -d /dev/cdc-wdm0 --query-subscriber-ready-status") == true)
        #expect(registration.remedy?.hasSuffix("mbimcli -p -d /dev/cdc-wdm0 --query-registration-state") == true)
    }

    @Test func aRadioOffOnAModelOfTheFCCUnlockListIsAnFCCLock() throws {
        let directory = "/tmp/doctor-fcc-\(getpid())"
        mkdir(directory, 0o700)
        defer { unlink(directory + "/1199:9079"); rmdir(directory) }
        close(open(directory + "/1199:9079", O_CREAT | O_WRONLY, 0o600))
        let locked = Self.checks(ModemStatus(radio: .off), fccList: directory).radio()
        #expect(locked.status == .fail && locked.summary.contains("FCC-locked"))
        #expect(locked.remedy?.contains("\(directory)/1199:9079") == true)
        #expect(Self.checks(ModemStatus(radio: .off)).radio().status == .warn, "off, not on the list: a warning")
        #expect(Self.checks(ModemStatus(radio: .on), fccList: directory).radio().status == .pass)

        // Through ModemManager, off is a modem ModemManager has not enabled: a warning that says
        // so, with the unlock as the way out if enabling it fails.
        var disabled = ModemStatus(radio: .off)
        disabled.backend = .modemManager
        let notEnabled = Self.checks(disabled, fccList: directory).radio()
        #expect(notEnabled.status == .warn && notEnabled.summary.contains("has not enabled"), "\(notEnabled.summary)")
        #expect(notEnabled.remedy?.contains("\(directory)/1199:9079") == true, "\(notEnabled.remedy ?? "")")
    }
}
