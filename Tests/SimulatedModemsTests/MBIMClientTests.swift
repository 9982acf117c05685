import Glibc
import SimulatedModems
import SimulatorScenario
import TestSupport
import Testing

/// The simulated MBIM modem as the real mbimcli (libmbim 1.28) sees it.
@Suite("MBIM modem checked by mbimcli", .serialized, .ownThreads)
struct MBIMClientTests {
    static let modem = SimulatedModem(
        protocol: .mbim, imei: "358812345678905", firmware: "FW.2.3",
        sim: SimulatedSIM(iccid: "8944110012345678901", imsi: "234150123456789", msisdn: "+447700900123"),
        network: SimulatedNetwork(mcc: "234", mnc: "15", operatorName: "Cellpath UK", rssiDbm: -75))

    @Test func deviceCaps() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.mbimcli("--query-device-caps")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("Device ID", in: r.stdout) == "358812345678905")
        #expect(field("Firmware info", in: r.stdout) == "FW.2.3")
        #expect(field("Hardware info", in: r.stdout) == "Simulated LTE modem")
        #expect(field("Data class", in: r.stdout)?.contains("lte") == true)
    }

    @Test func subscriberReadyStatus() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.mbimcli("--query-subscriber-ready-status")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("Ready state", in: r.stdout) == "initialized")
        #expect(field("Subscriber ID", in: r.stdout) == "234150123456789")
        #expect(field("SIM ICCID", in: r.stdout) == "8944110012345678901")
        #expect(r.stdout.contains("(1) '+447700900123'"))
    }

    @Test func pinListAndPacketStatistics() throws {
        let h = try ModemHarness(Self.modem)
        let pins = try h.mbimcli("--query-pin-list")
        #expect(pins.status == 0, "\(pins.stderr)")
        #expect(pins.stdout.contains("PIN1:\n\t\t      Mode: 'disabled'"), "\(pins.stdout)")
        let stats = try h.mbimcli("--query-packet-statistics")
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(field("Octets (in)", in: stats.stdout) == "0", "\(stats.stdout)")
    }

    @Test func radioState() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.mbimcli("--query-radio-state")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("Hardware radio state", in: r.stdout) == "on")
        #expect(field("Software radio state", in: r.stdout) == "on")
    }

    @Test func registrationState() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.mbimcli("--query-registration-state")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("Register state", in: r.stdout) == "home")
        #expect(field("Provider ID", in: r.stdout) == "23415")
        #expect(field("Provider name", in: r.stdout) == "Cellpath UK")
        #expect(field("Network error", in: r.stdout) == "none")
    }

    @Test func homeProvider() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.mbimcli("--query-home-provider")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("Provider ID", in: r.stdout) == "23415")
        #expect(field("Provider name", in: r.stdout) == "Cellpath UK")
        #expect(field("State", in: r.stdout) == "home")
    }

    @Test func signalState() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.mbimcli("--query-signal-state")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("RSSI [0-31,99]", in: r.stdout) == "19")  // (-75 + 113) / 2
    }

    @Test func packetServiceState() throws {
        let h = try ModemHarness(Self.modem)
        let r = try h.mbimcli("--query-packet-service-state")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("Packet service state", in: r.stdout) == "attached")
    }

    @Test func connectQueryIPConfigurationDisconnect() throws {
        let h = try ModemHarness(Self.modem)
        let c = try h.mbimcli("--connect=access-string=internet", "--no-close")
        #expect(c.status == 0, "\(c.stderr)")
        #expect(c.stdout.contains("Successfully connected"))
        #expect(h.bearerNetwork.isConnected(modemIndex: 0))
        let trid = try #require(field("TRID", in: c.stdout).flatMap { Int($0) })

        let ip = try h.mbimcli("--query-ip-configuration", "--no-open=\(trid)", "--no-close")
        #expect(ip.status == 0, "\(ip.stderr)")
        #expect(field("IP [0]", in: ip.stdout) == "100.64.23.10/32")
        #expect(field("Gateway", in: ip.stdout) == "100.64.0.1")
        #expect(field("DNS [0]", in: ip.stdout) == "100.64.0.53")
        #expect(field("MTU", in: ip.stdout) == "1500")
        let trid2 = try #require(field("TRID", in: ip.stdout).flatMap { Int($0) })

        let d = try h.mbimcli("--disconnect", "--no-open=\(trid2)")
        #expect(d.status == 0, "\(d.stderr)")
        #expect(d.stdout.contains("Successfully disconnected"))
        #expect(field("Activation state", in: d.stdout) == "deactivated")
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
    }

    @Test func closeTakesTheBearerDown() throws {
        let h = try ModemHarness(Self.modem)
        let c = try h.mbimcli("--connect=apn=internet")
        #expect(c.status == 0, "\(c.stderr)")
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
        let q = try h.mbimcli("--query-connection-state")
        #expect(field("Activation state", in: q.stdout) == "deactivated")
    }

    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func throughTheProxy() throws {
        let h = try ModemHarness(Self.modem)
        let caps = try h.mbimcli("-p", "--query-device-caps")
        #expect(caps.status == 0, "\(caps.stderr)")
        #expect(field("Device ID", in: caps.stdout) == "358812345678905")
        for (option, label, value) in [
            ("--query-subscriber-ready-status", "Subscriber ID", "234150123456789"),
            ("--query-radio-state", "Software radio state", "on"),
            ("--query-registration-state", "Register state", "home"),
            ("--query-home-provider", "Provider name", "Cellpath UK"),
            ("--query-signal-state", "RSSI [0-31,99]", "19"),
            ("--query-packet-service-state", "Packet service state", "attached")
        ] {
            let r = try h.mbimcli("-p", option)
            #expect(r.status == 0, "\(option): \(r.stderr)")
            #expect(field(label, in: r.stdout) == value, Comment(rawValue: option))
        }
        // Through the proxy the device stays open between clients.
        let c = try h.mbimcli("-p", "--connect=apn=internet")
        #expect(c.status == 0, "\(c.stderr)")
        let ip = try h.mbimcli("-p", "--query-ip-configuration")
        #expect(ip.status == 0, "\(ip.stderr)")
        #expect(field("IP [0]", in: ip.stdout) == "100.64.23.10/32")
        let d = try h.mbimcli("-p", "--disconnect")
        #expect(d.status == 0, "\(d.stderr)")
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
    }
}

/// Messages beyond the basic ones above that real clients (ModemManager, cellpath) send.
@Suite("MBIM modem extras", .serialized, .ownThreads)
struct MBIMExtraTests {
    @Test func deviceServices() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim))
        let r = try h.mbimcli("--query-device-services")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("basic-connect"))
        #expect(r.stdout.contains("ip-configuration"))
    }

    @Test func pinUnlockIndicatesReadinessAndRegistration() throws {
        var modem = SimulatedModem(protocol: .mbim)
        modem.sim?.pinLocked = true
        let h = try ModemHarness(modem)
        let port = try RawPort(h.path)
        port.send(MBIMTestFrames.open(tid: 1))
        _ = port.receive()
        let pin: [UInt8] = Array("1234".utf16).flatMap { [UInt8($0), 0] }
        port.send(
            MBIMTestFrames.command(
                tid: 2, cid: 4, set: true, info: le32(2) + le32(0) + le32(24) + le32(8) + le32(0) + le32(0) + pin))
        let messages = mbimMessages(port.receive())
        #expect(messages.first.map { readLE32($0, 40) } == 0)  // COMMAND_DONE success
        let indicated = messages.filter { readLE32($0, 0) == 0x8000_0007 }.map { readLE32($0, 36) }
        #expect(indicated == [2, 9, 10])  // ready status, register, packet service
        let registerState = try #require(messages.first { readLE32($0, 0) == 0x8000_0007 && readLE32($0, 36) == 9 })
        #expect(readLE32(Array(registerState[44...]), 4) == 3)  // home
    }
}
