import CellpathCore
import Glibc
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// Lifecycle events a simulated modem undergoes: reset with re-enumeration, SIM hot-swap, and
/// the DNS servers a firmware reports, as mbimcli and qmicli see them.
@Suite("Simulated modem lifecycle", .serialized, .ownThreads)
struct ModemLifecycleTests {
    /// The SIM a swap inserts: identities of no scenario modem.
    static let otherSIM = SimulatedSIM(index: 7)

    @Test func resetRenumbersThePortsAndLosesTheBearer() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim))
        let port = try RawPort(h.path)
        port.send(MBIMTestFrames.open(tid: 1))
        _ = port.receive()
        port.send(MBIMTestFrames.connect(tid: 2))
        _ = port.receive()
        #expect(h.bearerNetwork.isConnected(modemIndex: 0))
        var namesWhileAbsent: SimulatedModemDevice.KernelNames?
        try h.device.reset(as: 1, slow: .init(delayMs: 0, seconds: 1)) { names in
            namesWhileAbsent = names
            #expect(access("\(h.runDirectory)/dev/cdc-wdm0", F_OK) != 0)
            #expect(access("\(h.runDirectory)/sys/class/net/wwan0", F_OK) != 0)
        }
        #expect(namesWhileAbsent == .enumerated(1, profile: h.device.modem.profile))
        #expect(namesWhileAbsent?.controlPort == "cdc-wdm1" && namesWhileAbsent?.interface == "wwan1")
        #expect(port.hungUp())
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
        #expect(h.device.controlPortName == "cdc-wdm1" && h.device.interfaceName == "wwan1")
        #expect(access("\(h.runDirectory)/dev/cdc-wdm0", F_OK) != 0)
        #expect(access("\(h.runDirectory)/sys/class/usbmisc/cdc-wdm0", F_OK) != 0)
        #expect(access("\(h.runDirectory)/sys/class/usbmisc/cdc-wdm1", F_OK) == 0)
        #expect(access("\(h.runDirectory)/sys/class/net/wwan1", F_OK) == 0)
        #expect(access("\(h.runDirectory)/sys/class/wwan/wwan1mbim0", F_OK) == 0)
        let old = try ProcessRunner.run(["mbimcli", "-d", "\(h.runDirectory)/dev/cdc-wdm0", "--query-device-caps"])
        #expect(old.status != 0)
        let renamed = try ProcessRunner.run(["mbimcli", "-d", "\(h.runDirectory)/dev/cdc-wdm1", "--query-device-caps"])
        #expect(renamed.status == 0, "\(renamed.stderr)")
        #expect(field("Device ID", in: renamed.stdout) == h.device.modem.imei)
        let state = try ProcessRunner.run([
            "mbimcli", "-d", "\(h.runDirectory)/dev/cdc-wdm1",
            "--query-connection-state"
        ])
        #expect(field("Activation state", in: state.stdout) == "deactivated", "\(state.stdout)")
    }

    @Test func aModemAnswersSlowlyForAWhileAfterAReset() throws {
        var modem = SimulatedModem(protocol: .qmi)
        modem.faults.slowAfterResetMs = 400
        modem.faults.slowAfterResetSeconds = 3
        let h = try ModemHarness(modem)
        let quick = try timed { try h.qmicli("--dms-get-ids") }
        #expect(quick.result.status == 0 && quick.seconds < 0.4, "\(quick.seconds) s")
        try h.device.reset()
        #expect(h.device.controlPortName == "cdc-wdm0")
        // At least the client allocation, the request and the release: three answers, each 400 ms late.
        let slow = try timed { try h.qmicli("--dms-get-ids") }
        #expect(slow.result.status == 0, "\(slow.result.stderr)")
        #expect(slow.seconds >= 1.2, "\(slow.seconds) s")
        usleep(3_000_000)
        let again = try timed { try h.qmicli("--dms-get-ids") }
        #expect(again.result.status == 0 && again.seconds < 0.4, "\(again.seconds) s")
    }

    @Test func mbimSIMHotSwapSendsSubscriberReadyIndications() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim))
        let port = try RawPort(h.path)
        port.send(MBIMTestFrames.open(tid: 1))
        _ = port.receive()
        port.send(MBIMTestFrames.connect(tid: 2))
        _ = port.receive()
        #expect(h.bearerNetwork.isConnected(modemIndex: 0))
        h.device.changeSIM(nil)
        h.device.changeSIM(Self.otherSIM)
        let indications = mbimMessages(port.receive()).filter { readLE32($0, 0) == 0x8000_0007 }
        // CID at 36 (after the header, the fragment header and the service UUID), information at 44.
        let cids = indications.map { readLE32($0, 36) }
        #expect(cids.first == 12, "the connection's deactivation first: \(cids)")
        let ready = indications.filter { readLE32($0, 36) == 2 }.map { readLE32($0, 44) }
        #expect(ready == [2, 1], "ready states \(ready): not-inserted, then initialized")
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
        let status = try h.mbimcli("--query-subscriber-ready-status")
        #expect(field("SIM ICCID", in: status.stdout) == Self.otherSIM.iccid, "\(status.stdout)")
        #expect(field("Subscriber ID", in: status.stdout) == Self.otherSIM.imsi)
    }

    @Test func qmiSIMHotSwapShowsTheNewICCID() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        let before = try h.qmicli("--dms-uim-get-iccid")
        #expect(before.stdout.contains(SimulatedSIM().iccid), "\(before.stdout)")
        h.device.changeSIM(nil)
        let absent = try h.qmicli("--dms-uim-get-iccid")
        #expect(absent.status != 0 && absent.stderr.contains("UimUninitialized"), "\(absent.stderr)")
        h.device.changeSIM(Self.otherSIM)
        let after = try h.qmicli("--dms-uim-get-iccid")
        #expect(after.stdout.contains(Self.otherSIM.iccid), "\(after.stdout)")
        let imsi = try h.qmicli("--dms-uim-get-imsi")
        #expect(imsi.stdout.contains(Self.otherSIM.imsi), "\(imsi.stdout)")
    }

    @Test func theSwappedSIMStaysThroughAReset() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        h.device.changeSIM(Self.otherSIM)
        try h.device.reset(slow: .init(delayMs: 0, seconds: 1))
        let after = try h.qmicli("--dms-uim-get-iccid")
        #expect(after.stdout.contains(Self.otherSIM.iccid), "\(after.stdout)")
    }

    @Test func qmiSIMRemovalIsAnnouncedToDMSClients() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        let port = try RawPort(h.path)
        port.send(QMITestFrames.ctl(tid: 1, message: 0x0022, tlvs: [(0x01, [0x02])]))  // allocate a DMS client
        let allocation = qmiFrames(port.receive())
        let cid = try #require(allocation.first?.tlvs[0x01]).last ?? 0
        h.device.changeSIM(nil)
        let events = qmiFrames(port.receive()).filter { $0.service == 0x02 && $0.messageID == 0x0001 }
        #expect(events.count == 1 && events.first?.clientID == cid)
        #expect(events.first?.tlvs[0x15] == [0x02], "UIM state not present")
    }

    @Test func reportedDNSChangesForTheConnectedBearer() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim))
        var trid = 0
        /// mbimcli on the session the connect opened, kept open.
        func mbimcli(_ arguments: String...) throws -> ProcessResult {
            let r = try ProcessRunner.run(
                ["mbimcli", "-d", h.path] + arguments
                    + (trid == 0 ? [] : ["--no-open=\(trid)"]) + ["--no-close"])
            trid = field("TRID", in: r.stdout).flatMap { Int($0) } ?? trid
            return r
        }
        let connect = try mbimcli("--connect=apn=internet")
        #expect(connect.status == 0, "\(connect.stderr)")
        let carrier = try mbimcli("--query-ip-configuration")
        #expect(carrier.stdout.contains("100.64.0.53"), "\(carrier.stdout)")
        h.device.reportDNS(["0.0.0.0", "::"])
        let zero = try mbimcli("--query-ip-configuration")
        // DNS still announced available; mbimcli prints no line for an all-zero server.
        #expect(
            zero.stdout.contains("'address, gateway, dns, mtu'") && !zero.stdout.contains("DNS ["),
            "\(zero.stdout)")
        h.device.reportDNS(nil)
        let back = try mbimcli("--query-ip-configuration")
        #expect(back.stdout.contains("100.64.0.53"), "\(back.stdout)")
    }

    @Test func theFleetRenumbersToTheNextFreeIndex() throws {
        let dir = try TemporaryDirectory.make("cellpath-fleet")
        defer { FileSystem.removeTree(dir) }
        let scenario = Scenario(modems: [SimulatedModem(index: 0), SimulatedModem(index: 1)])
        let fleet = SimulatedModemFleet(scenario: scenario, runDirectory: dir, bearerNetwork: StaticBearerNetwork())
        try fleet.start()
        defer { fleet.stop() }
        #expect(fleet.nextFreeNumber() == 2)
        try fleet.devices[0].reset(as: fleet.nextFreeNumber())
        #expect(fleet.devices[0].controlPortName == "cdc-wdm2")
        #expect(fleet.device(controlPort: "cdc-wdm2") === fleet.devices[0])
        #expect(fleet.nextFreeNumber() == 0)
    }

    private func timed(_ body: () throws -> ProcessResult) throws -> (result: ProcessResult, seconds: Double) {
        let start = ModemServerClock.now()
        let result = try body()
        return (result, ModemServerClock.now() - start)
    }
}
