import Glibc
import SimulatedModems
import SimulatorScenario
import TestSupport
import Testing

/// The simulated QMI modem as the real qmicli (libqmi 1.32) sees it.
@Suite("QMI modem checked by qmicli", .serialized, .ownThreads)
struct QMIClientTests {
    static let modem = SimulatedModem(
        protocol: .qmi, imei: "867530912345678", manufacturer: "Quectel-ish", model: "EC25-SIM", firmware: "EC25.R06",
        sim: SimulatedSIM(iccid: "8931440301234567890", imsi: "204080123456789", msisdn: "+31612345678"),
        network: SimulatedNetwork(mcc: "204", mnc: "08", operatorName: "Cellpath NL", rssiDbm: -67))

    /// qmicli's own LOC client: a session started with one client ID, then its position report
    /// read on the same client (its ID kept allocated between the two runs, then released).
    @Test func locPositionReport() throws {
        var modem = Self.modem
        modem.gnss = SimulatedGNSS(lat: 52.3676, lon: 4.9041, accuracy: 12)
        let h = try ModemHarness(modem)
        let start = try h.qmicli("--loc-start", "--loc-session-id=7", "--client-no-release-cid")
        #expect(start.status == 0, "\(start.stderr)")
        let cid = try #require(field("CID", in: start.stdout), "\(start.stdout)")
        let report = try h.qmicli("--loc-get-position-report", "--loc-timeout=5", "--client-cid=\(cid)")
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.contains("52.367600"), "\(report.stdout)")
        #expect(report.stdout.contains("4.904100"), "\(report.stdout)")
        #expect(h.device.allocatedQMIClientIDs == 0)
    }

    @Test func dmsGetIDs() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.qmicli("--dms-get-ids")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("IMEI", in: r.stdout) == "867530912345678")
    }

    @Test func dmsIdentity() throws {
        let h = try ModemHarness(Self.modem)
        let manufacturer = try h.qmicli("--dms-get-manufacturer")
        #expect(field("Manufacturer", in: manufacturer.stdout) == "Quectel-ish")
        let model = try h.qmicli("--dms-get-model")
        #expect(field("Model", in: model.stdout) == "EC25-SIM")
        let revision = try h.qmicli("--dms-get-revision")
        #expect(field("Revision", in: revision.stdout) == "EC25.R06")
    }

    @Test func dmsGetMSISDN() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.qmicli("--dms-get-msisdn")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("MSISDN", in: r.stdout) == "+31612345678")
    }

    @Test func dmsUIMGetICCIDAndIMSI() throws {
        let h = try ModemHarness(Self.modem)
        let iccid = try h.qmicli("--dms-uim-get-iccid")
        #expect(iccid.status == 0, "\(iccid.stderr)")
        #expect(field("ICCID", in: iccid.stdout) == "8931440301234567890")
        let imsi = try h.qmicli("--dms-uim-get-imsi")
        #expect(imsi.status == 0, "\(imsi.stderr)")
        #expect(field("IMSI", in: imsi.stdout) == "204080123456789")
    }

    @Test func dmsOperatingModeAndPINStatus() throws {
        let h = try ModemHarness(Self.modem)
        let mode = try h.qmicli("--dms-get-operating-mode")
        #expect(field("Mode", in: mode.stdout) == "online")
        let pin = try h.qmicli("--dms-uim-get-pin-status")
        #expect(pin.status == 0, "\(pin.stderr)")
        #expect(pin.stdout.contains("PIN1:\n\tStatus: disabled"))
        let low = try h.qmicli("--dms-set-operating-mode=low-power")
        #expect(low.status == 0, "\(low.stderr)")
        let after = try h.qmicli("--dms-get-operating-mode")
        #expect(field("Mode", in: after.stdout) == "low-power")
        let serving = try h.qmicli("--nas-get-serving-system")
        #expect(field("Registration state", in: serving.stdout) == "not-registered")
    }

    @Test func dmsGetCapabilitiesAndVersions() throws {
        let h = try ModemHarness(Self.modem)
        let caps = try h.qmicli("--dms-get-capabilities")
        #expect(caps.status == 0, "\(caps.stderr)")
        #expect(field("Networks", in: caps.stdout) == "lte", "\(caps.stdout)")
        #expect(field("SIM", in: caps.stdout) == "supported")
        let versions = try h.qmicli("--get-service-version-info")
        #expect(versions.stdout.contains("nas (1.25)"))
        #expect(!versions.stdout.contains("uim"))
    }

    @Test func nasGetSystemInfo() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.qmicli("--nas-get-system-info")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("LTE service:\n\t\tStatus: 'available'"), "\(r.stdout)")
        #expect(field("MCC", in: r.stdout) == "204")
        #expect(field("Tracking Area Code", in: r.stdout) == "10769")
    }

    @Test func wdsPacketStatistics() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.qmicli("--wds-get-packet-statistics")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("TX packets OK", in: r.stdout) == "0")
        #expect(field("RX bytes OK", in: r.stdout) == "0")
    }

    @Test func nasGetServingSystem() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.qmicli("--nas-get-serving-system")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("Registration state", in: r.stdout) == "registered")
        #expect(field("PS", in: r.stdout) == "attached")
        #expect(field("Roaming status", in: r.stdout) == "off")
        #expect(field("MCC", in: r.stdout) == "204")
        #expect(field("MNC", in: r.stdout) == "8")
        #expect(field("Description", in: r.stdout) == "Cellpath NL")
    }

    @Test func nasGetSignalStrength() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.qmicli("--nas-get-signal-strength")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Current:\n\tNetwork 'lte': '-67 dBm'"))
    }

    @Test func nasGetHomeNetwork() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.qmicli("--nas-get-home-network")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("MCC", in: r.stdout) == "204")
        #expect(field("Description", in: r.stdout) == "Cellpath NL")
    }

    @Test func wdaDataFormat() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.qmicli("--wda-get-data-format")
        #expect(field("Link layer protocol", in: r.stdout) == "raw-ip")
        let set = try h.qmicli("--wda-set-data-format=link-layer-protocol=802-3")
        #expect(set.status == 0, "\(set.stderr)")
        let after = try h.qmicli("--wda-get-data-format")
        #expect(field("Link layer protocol", in: after.stdout) == "802-3")
    }

    @Test func wdsStartSettingsStop() throws {
        let h = try ModemHarness(Self.modem)
        let start = try h.qmicli("--wds-start-network=apn=internet,ip-type=4", "--client-no-release-cid")
        #expect(start.status == 0, "\(start.stderr)")
        let handle = try #require(field("Packet data handle", in: start.stdout))
        let cid = try #require(field("CID", in: start.stdout))
        #expect(h.bearerNetwork.isConnected(modemIndex: 0))

        let status = try h.qmicli("--wds-get-packet-service-status", "--client-cid=\(cid)", "--client-no-release-cid")
        #expect(status.stdout.contains("Connection status: 'connected'"))

        let settings = try h.qmicli("--wds-get-current-settings", "--client-cid=\(cid)", "--client-no-release-cid")
        #expect(settings.status == 0, "\(settings.stderr)")
        #expect(field("IPv4 address", in: settings.stdout) == "100.64.23.10")
        #expect(field("IPv4 gateway address", in: settings.stdout) == "100.64.0.1")
        #expect(field("IPv4 primary DNS", in: settings.stdout) == "100.64.0.53")
        #expect(field("IPv4 subnet mask", in: settings.stdout) == "255.255.255.255")
        #expect(field("MTU", in: settings.stdout) == "1500")

        let stop = try h.qmicli("--wds-stop-network=\(handle)", "--client-cid=\(cid)")
        #expect(stop.status == 0, "\(stop.stderr)")
        #expect(stop.stdout.contains("Network stopped"))
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
        let gone = try h.qmicli("--wds-get-current-settings")
        #expect(gone.status != 0)
        #expect(gone.stderr.contains("OutOfCall"))
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func throughTheProxy() throws {
        let h = try ModemHarness(Self.modem)
        let ids = try ProcessRunner.run(["qmicli", "-p", "-d", h.path, "--device-open-qmi", "--dms-get-ids"])
        #expect(ids.status == 0, "\(ids.stderr)")
        #expect(field("IMEI", in: ids.stdout) == "867530912345678")
        let imsi = try ProcessRunner.run(["qmicli", "-p", "-d", h.path, "--device-open-qmi", "--dms-uim-get-imsi"])
        #expect(field("IMSI", in: imsi.stdout) == "204080123456789")
        let start = try ProcessRunner.run([
            "qmicli", "-p", "-d", h.path, "--device-open-qmi",
            "--wds-start-network=apn=internet,ip-type=4", "--client-no-release-cid"
        ])
        #expect(start.status == 0, "\(start.stderr)")
        let cid = try #require(field("CID", in: start.stdout))
        let handle = try #require(field("Packet data handle", in: start.stdout))
        let settings = try ProcessRunner.run([
            "qmicli", "-p", "-d", h.path, "--device-open-qmi",
            "--wds-get-current-settings", "--client-cid=\(cid)", "--client-no-release-cid"
        ])
        #expect(field("IPv4 address", in: settings.stdout) == "100.64.23.10")
        let stop = try ProcessRunner.run([
            "qmicli", "-p", "-d", h.path, "--device-open-qmi",
            "--wds-stop-network=\(handle)", "--client-cid=\(cid)"
        ])
        #expect(stop.status == 0, "\(stop.stderr)")
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
    }
}
