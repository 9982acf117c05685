import Glibc
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// What `sim status` shows of each modem (radio, registration, PIN, roaming) follows
/// what its clients did, and several modems of one scenario have distinct identities.
@Suite("Simulated modem control status", .serialized, .ownThreads)
struct ModemControlStatusTests {
    /// Waits (up to a generous 5 s, to prevent a hang) until the device publishes a status that
    /// satisfies `condition`, and returns the last one seen.
    private func status(
        of device: SimulatedModemDevice, until condition: (ModemControlStatus) -> Bool
    ) -> ModemControlStatus? {
        var last = device.controlStatus
        Poll.until(timeout: .seconds(5), interval: .milliseconds(10)) {
            last = device.controlStatus
            return last.map(condition) ?? false
        }
        return last
    }

    @Test func pinStateFollowsTheClient() throws {
        var modem = SimulatedModem(protocol: .mbim)
        modem.sim?.pinLocked = true
        modem.sim?.pin = "4321"
        let h = try ModemHarness(modem)
        #expect(
            h.device.controlStatus
                == ModemControlStatus(
                    radio: .on, registration: .deregistered, pin: .required,
                    pinAttemptsLeft: 3, roaming: false))
        #expect(ModemControlStatus(initial: modem) == h.device.controlStatus)
        _ = try h.mbimcli("--enter-pin=0000")
        #expect(status(of: h.device) { $0.pinAttemptsLeft == 2 }?.pin == .required)
        let right = try h.mbimcli("--enter-pin=4321")
        #expect(right.status == 0, "\(right.stderr)")
        #expect(
            status(of: h.device) { $0.pin == .verified }
                == ModemControlStatus(
                    radio: .on, registration: .home, pin: .verified, pinAttemptsLeft: 3, roaming: false))
    }

    @Test func blockedPINAndMissingSIM() throws {
        var blocked = SimulatedModem(protocol: .qmi)
        blocked.sim?.pinLocked = true
        blocked.sim?.pinAttemptsLeft = 0
        #expect(ModemControlStatus(initial: blocked).pin == .blocked)
        var empty = SimulatedModem(protocol: .qmi)
        empty.sim = nil
        let h = try ModemHarness(empty)
        #expect(
            h.device.controlStatus
                == ModemControlStatus(
                    radio: .on, registration: .deregistered, pin: nil,
                    pinAttemptsLeft: nil, roaming: false))
    }

    @Test func radioAndRegistrationFollowTheControls() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        #expect(h.device.controlStatus?.registration == .home)
        h.device.setRadio(on: false)
        #expect(status(of: h.device) { $0.radio == .off }?.registration == .deregistered)
        h.device.setRadio(on: true)
        h.device.setRegistration(.denied)
        #expect(status(of: h.device) { $0.radio == .on && $0.registration == .denied } != nil)
        // What a client switches counts too.
        let off = try h.qmicli("--dms-set-operating-mode=low-power")
        #expect(off.status == 0, "\(off.stderr)")
        #expect(status(of: h.device) { $0.radio == .off }?.radio == .off)
    }

    @Test func roamingIsShown() throws {
        var modem = SimulatedModem(protocol: .mbim)
        modem.network.roaming = true
        let h = try ModemHarness(modem)
        #expect(h.device.controlStatus?.registration == .roaming)
        #expect(h.device.controlStatus?.roaming == true)
        h.device.stop()
        #expect(h.device.controlStatus == nil)
    }

    @Test func modemsOfOneScenarioHaveDistinctIdentities() throws {
        let scenario = try Scenario.decode(Array(#"{"modems": [{}, {"protocol": "qmi"}]}"#.utf8))
        let run = try TemporaryDirectory.make("cellpath-fleet")
        defer { FileSystem.removeTree(run) }
        let fleet = SimulatedModemFleet(scenario: scenario, runDirectory: run, bearerNetwork: StaticBearerNetwork())
        try fleet.start()
        defer { fleet.stop() }
        let mbim = try ProcessRunner.run(["mbimcli", "-d", "\(run)/dev/cdc-wdm0", "--query-device-caps"])
        let qmi = try ProcessRunner.run(["qmicli", "-d", "\(run)/dev/cdc-wdm1", "--device-open-qmi", "--dms-get-ids"])
        let first = try #require(field("Device ID", in: mbim.stdout), "\(mbim.stdout) \(mbim.stderr)")
        let second = try #require(field("IMEI", in: qmi.stdout), "\(qmi.stdout) \(qmi.stderr)")
        #expect(first == SimulatedModem.defaultIMEI(index: 0))
        #expect(second == SimulatedModem.defaultIMEI(index: 1))
        #expect(first != second)
        let msisdn0 = try ProcessRunner.run(["mbimcli", "-d", "\(run)/dev/cdc-wdm0", "--query-subscriber-ready-status"])
        let msisdn1 = try ProcessRunner.run([
            "qmicli", "-d", "\(run)/dev/cdc-wdm1", "--device-open-qmi", "--dms-get-msisdn"
        ])
        #expect(msisdn0.stdout.contains("447940448591"), "\(msisdn0.stdout)")
        #expect(msisdn1.stdout.contains("447940448592"), "\(msisdn1.stdout)")
    }
}
