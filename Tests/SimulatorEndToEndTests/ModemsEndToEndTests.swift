import CellpathCore
import Glibc
import SimulatorScenario
import TestSupport
import Testing

/// `cellpath modems` on the simulated device (`sudo cellpath sim up`, then `cellpath sim exec --
/// cellpath modems`): it finds the world's MBIM and QMI modems, and nothing of the host's,
/// through the proxies (root), and sees a bearer that another client connected.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ModemsEndToEndTests {
    private static var scenario: Scenario {
        var scenario = Scenario.builtIn
        scenario.modems = [
            SimulatedModem(
                protocol: .mbim, imei: "351234567890123", model: "EM7565-SIM",
                sim: SimulatedSIM(iccid: "8944110012345678901", imsi: "234150123456789", msisdn: "+447940448591"),
                network: SimulatedNetwork(mcc: "234", mnc: "15", operatorName: "Vodafone UK", rssiDbm: -71)),
            SimulatedModem(
                protocol: .qmi, imei: "351234567890124", model: "EC25-SIM",
                sim: SimulatedSIM(iccid: "8944110012345678902", imsi: "234150123456780", msisdn: "+447940448592"),
                network: SimulatedNetwork(
                    mcc: "234", mnc: "15", operatorName: "Vodafone UK", roaming: true, rssiDbm: -85))
        ]
        return scenario
    }

    @Test func cellpathModemsInTheSimulatedWorld() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            defer { Self.stopProxies(device) }
            let result = try device.cellpath(["modems", "--json", "--verbose-full"])
            #expect(result.status == 0, "\(result.stderr)")
            let json = try JSONValue.parse(result.stdout)
            let modems = try #require(json["modems"]?.array)
            try #require(modems.count == 2, "\(result.stdout)")
            let (mbim, qmi) = (modems[0], modems[1])
            #expect(
                mbim["protocol"]?.string == "mbim"
                    && mbim["ports"]?.array?.compactMap(\.string) == ["cdc-wdm0", "wwan0mbim0"])
            #expect(qmi["protocol"]?.string == "qmi" && qmi["ports"]?.array?.compactMap(\.string) == ["cdc-wdm1"])
            #expect(mbim["interface"]?.string == "wwan0" && qmi["interface"]?.string == "wwan1")
            #expect(mbim["imei"]?.string == "351234567890123" && qmi["imei"]?.string == "351234567890124")
            #expect(mbim["model"]?.string == "EM7565-SIM" && qmi["model"]?.string == "EC25-SIM")
            #expect(
                mbim["sim"]?["iccid"]?.string == "8944110012345678901"
                    && qmi["sim"]?["iccid"]?.string == "8944110012345678902")
            #expect(
                mbim["sim"]?["imsi"]?.string == "234150123456789" && qmi["sim"]?["imsi"]?.string == "234150123456780")
            #expect(mbim["sim"]?["msisdns"]?.array?.compactMap(\.string) == ["+447940448591"])
            #expect(qmi["sim"]?["msisdns"]?.array?.compactMap(\.string) == ["+447940448592"])
            #expect(
                mbim["registration"]?["state"]?.string == "home" && qmi["registration"]?["state"]?.string == "roaming")
            #expect(mbim["registration"]?["operator"]?["name"]?.string == "Vodafone UK")
            #expect(mbim["home_operator"]?["id"]?.string == "234-15")
            #expect(mbim["signal"]?["rssi_dbm"]?.int == -71 && qmi["signal"]?["rssi_dbm"]?.int == -85)
            #expect(modems.allSatisfy { $0["bearer"]?["state"]?.string == "disconnected" && $0["error"] == .null })
            #expect(result.stderr.contains("MBIM session open through mbim-proxy"))
            #expect(result.stderr.contains("QMI session open through qmi-proxy"))

            // A bearer that qmicli connected through the proxy, as ModemManager would, is seen
            // with its address; reading leaves it connected.
            let port = try #require(qmi["device"]?.string)
            let start = try device.run([
                "qmicli", "-p", "-d", port, "--device-open-qmi",
                "--wds-start-network=apn=internet,ip-type=4", "--client-no-release-cid"
            ])
            #expect(start.status == 0, "\(start.stderr)")
            let show = try device.cellpath(["modems", "show", "1", "--json"])
            #expect(show.status == 0, "\(show.stderr)")
            let shown = try JSONValue.parse(show.stdout)
            #expect(shown["bearer"]?["state"]?.string == "connected")
            #expect(shown["bearer"]?["ipv4_address"]?.string == "100.64.23.11")
            #expect(shown["bearer"]?["dns_servers"]?.array?.compactMap(\.string) == ["100.64.0.53"])
            #expect(shown["imei"]?.string == "••••24", "masked without --verbose-full")
            #expect(try device.status()["modems"]?.array?[1]["bearer"]?.string == "connected")

            // Outside the world (no CELLPATH_SYSFS_ROOT) the simulated modems are not found.
            let host = try CellpathBinary.run(["modems", "--json"])
            #expect(!host.stdout.contains("EM7565-SIM") && !host.stdout.contains(port))
        }
    }

    /// Stops the proxies that cellpath started in the device's namespace (`sim down` leaves
    /// them); they must obey SIGTERM, which they would not if they had inherited the blocked
    /// signals of Swift's threads.
    private static func stopProxies(_ device: SimulatedDevice) {
        guard let listed = try? ProcessRunner.run(["ip", "netns", "pids", device.ue], environment: SimulatedDevice.path)
        else { return }
        let proxies = listed.stdout.split(separator: "\n").compactMap { Int32($0) }.filter { pid in
            let name = Self.text("/proc/\(pid)/comm")
            return name == "mbim-proxy\n" || name == "qmi-proxy\n"
        }
        #expect(proxies.count == 2, "cellpath started mbim-proxy and qmi-proxy in \(device.ue)")
        for pid in proxies { kill(pid, SIGTERM) }
        for pid in proxies {
            let ended = Poll.until(timeout: .seconds(5)) {
                kill(pid, 0) != 0 || Self.text("/proc/\(pid)/stat")?.contains(") Z ") == true
            }
            #expect(ended, "proxy \(pid) ignored SIGTERM")
            if !ended { kill(pid, SIGKILL) }
        }
    }

    private static func text(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = fread(&buffer, 1, buffer.count, file)
        return String(decoding: buffer[0 ..< n], as: UTF8.self)
    }
}
