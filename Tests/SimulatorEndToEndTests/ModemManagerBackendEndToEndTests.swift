import CellpathCore
import FoundationEssentials
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// cellpath through the real ModemManager on the simulated modems (`--backend`, auto by
/// default): discovery, reusing a bearer that mmcli connected (and leaving it up), bringing a
/// bearer up and down itself, `fetch --modem` with nothing on Wi-Fi, and ModemManager's refusals
/// with the direct backends' exit codes.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ModemManagerBackendEndToEndTests {
    /// The MBIM modem 0 and the QMI modem 1, with ModemManager.
    static var scenario: Scenario {
        var scenario = Scenario.builtIn
        scenario.modems = [SimulatedModem(index: 0), SimulatedModem(index: 1)]
        scenario.modems[1].protocol = .qmi
        scenario.modemManager = true
        return scenario
    }

    @Test func discoveryThroughModemManagerListsBothModems() throws {
        let scenario = Self.scenario
        try SimulatedDevice.with(scenario, connect: false) { device in
            let listed = try device.cellpath(["modems", "--json", "--verbose-full"])
            #expect(listed.status == 0, "\(listed.stderr)")
            let modems = try JSONValue.parse(listed.stdout)["modems"]?.array ?? []
            #expect(modems.count == 2, "\(listed.stdout)")
            #expect(modems.map { $0["backend"]?.string } == ["modemmanager", "modemmanager"], "\(listed.stdout)")
            #expect(modems.map { $0["protocol"]?.string } == ["mbim", "qmi"])
            // What ModemManager read from each simulated modem.
            #expect(modems.map { $0["imei"]?.string } == scenario.modems.map { $0.imei })
            #expect(modems.map { $0["model"]?.string } == scenario.modems.map { $0.model })
            #expect(modems.map { $0["sim"]?["state"]?.string } == ["ready", "ready"], "\(listed.stdout)")
            #expect(modems.allSatisfy { $0["error"] == .null }, "\(listed.stdout)")

            // Named explicitly, the same; the human table names the backend too.
            let table = try device.cellpath(["modems", "--backend", "modemmanager"])
            #expect(table.status == 0, "\(table.stderr)")
            #expect(
                table.stdout.split(separator: "\n").dropFirst().allSatisfy { $0.contains(" modemmanager ") },
                "\(table.stdout)")
        }
    }

    @Test func aBearerThatMmcliConnectedIsReusedAndLeftUp() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let connect = try device.run([
                "mmcli", "-m", try Self.modemPath(device, port: "cdc-wdm0"), "--simple-connect=apn=internet"
            ])
            #expect(connect.status == 0, "\(connect.stdout) \(connect.stderr)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "connected")

            let up = try device.cellpath(["bearer", "up", "-m", "0", "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            let report = try JSONValue.parse(up.stdout)
            #expect(report["backend"]?.string == "modemmanager")
            #expect(report["reused"]?.bool == true)
            #expect(report["brought_up_by"]?.string == "another program")
            #expect(report["ipv4_address"]?.string == "100.64.23.10")

            let fetch = try device.cellpath(["fetch", "-m", "0", "--json", "http://mno.carrier.test/"])
            #expect(
                try JSONValue.parse(fetch.stdout).hops.first?["local_address"]?.string == "100.64.23.10",
                "\(fetch.stderr)")

            let down = try device.cellpath(["bearer", "down", "-m", "0", "--json"])
            #expect(down.status == 0, "\(down.stderr)")
            #expect(try JSONValue.parse(down.stdout)["bearer"]?.string == "left-connected")
            // mmcli's bearer is still up, in the simulated modem and in ModemManager.
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "connected")
            let shown = try device.run([
                "mmcli", "-m", try Self.modemPath(device, port: "cdc-wdm0"), "--output-keyvalue"
            ])
            #expect(
                shown.stdout.split(separator: "\n").contains {
                    $0.hasPrefix("modem.generic.state ") && $0.hasSuffix(": connected")
                },
                "\(shown.stdout)")
        }
    }

    @Test func cellpathBringsBearersUpAndDownThroughModemManager() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            for (index, port) in [(0, "cdc-wdm0"), (1, "cdc-wdm1")] {
                let up = try device.cellpath(["bearer", "up", "-m", "\(index)", "--json"])
                #expect(up.status == 0, "modem \(index): \(up.stderr)")
                let report = try JSONValue.parse(up.stdout)
                #expect(report["backend"]?.string == "modemmanager")
                #expect(report["reused"]?.bool == false)
                #expect(report["brought_up_by"]?.string == "cellpath")
                #expect(report["ipv4_address"]?.string == "100.64.23.1\(index)")
                #expect(try device.status()["modems"]?.array?[index]["bearer"]?.string == "connected")
                let interface = "wwan\(index)"
                #expect(
                    try device.run(["ip", "-4", "addr", "show", "dev", interface]).stdout.contains(
                        "inet 100.64.23.1\(index)/32"))
                // The record names the net device ModemManager's bearer carries data on, read from it.
                let record = try Self.record(device)
                #expect(record["interface"]?.string == interface, "\(record)")
                #expect(record["handle"]?["dataInterface"]?.string == interface, "\(record)")
                #expect(record["backend"]?.string == "modemmanager", "\(record)")
                // ModemManager knows the bearer cellpath created.
                let path = try Self.modemPath(device, port: port)
                #expect(try device.run(["mmcli", "-m", path]).stdout.contains("/org/freedesktop/ModemManager1/Bearer/"))

                let status = try device.cellpath(["bearer", "status", "-m", "\(index)", "--json"])
                #expect(try JSONValue.parse(status.stdout)["state"]?.string == "connected", "\(status.stderr)")

                let down = try device.cellpath(["bearer", "down", "-m", "\(index)", "--json"])
                #expect(down.status == 0, "\(down.stderr)")
                let result = try JSONValue.parse(down.stdout)
                #expect(result["bearer"]?.string == "disconnected")
                #expect(result["backend"]?.string == "modemmanager")
                #expect(try device.status()["modems"]?.array?[index]["bearer"]?.string == "disconnected")
                #expect(
                    try device.run(["ip", "-4", "addr", "show", "dev", interface]).stdout.contains("inet ") == false)
                // The bearer object cellpath created is deleted again.
                #expect(
                    try device.run(["mmcli", "-m", path]).stdout.contains("/org/freedesktop/ModemManager1/Bearer/")
                        == false)
            }
        }
    }

    /// The one bearer record in the device's state directory.
    static func record(_ device: SimulatedDevice) throws -> JSONValue {
        let state = try #require(try device.environment()["CELLPATH_STATE_DIR"])
        let names = (FileSystem.entries(state) ?? []).filter { $0.hasPrefix("bearer-") && $0.hasSuffix(".json") }
        try #require(names.count == 1, "\(names)")
        return try JSONValue.parse(FileSystem.readText("\(state)/\(names[0])") ?? "")
    }

    @Test func fetchThroughModemManagerSendsNothingThroughWiFi() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let check = try device.subscriberCheckURL()  // backend leg, over Wi-Fi, before the capture
            let logMark = try device.requestLog().count
            let (fetch, packets) = try device.capture(on: ["wlan0"]) {
                try device.cellpath(["fetch", "--modem", "0", check.url, "--json", "-v"])
            }
            #expect(fetch.status == 0, "\(fetch.stderr)")
            #expect(fetch.stderr.contains("info: [modem0] through ModemManager"), "\(fetch.stderr)")
            #expect(fetch.stderr.contains("info: [modem0] bearer connected"))
            #expect(packets["wlan0"] == [], "packets on wlan0 during the chain: \(packets["wlan0"] ?? [])")
            let chain = try Array(device.requestLog().dropFirst(logMark))
            #expect(
                chain.map { $0["namespace"]?.string } == [
                    device.prefix + "inet", device.prefix + "carrier", device.prefix + "inet"
                ])
            #expect(chain.allSatisfy { $0["source"]?.string == "100.64.23.10" }, "\(chain)")
            let json = try JSONValue.parse(fetch.stdout)
            #expect(json["modem_backend"]?.string == "modemmanager")
            #expect(json["result"]?["callback"]?["check_id"]?.string == check.id)
            // The bearer this fetch brought up is down again, and its configuration gone.
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(try device.run(["ip", "-4", "addr", "show", "dev", "wwan0"]).stdout.contains("inet ") == false)
            #expect(try device.run(["ip", "rule"]).stdout.contains("100.64.23.10") == false)
        }
    }

    /// The network drops the bearer during the fetch: ModemManager's state change marks the path
    /// down at once, the fetch fails closed (69) with nothing on Wi-Fi, and cellpath's bearer
    /// object and addressing are gone afterwards.
    @Test func aBearerDroppedDuringTheFetchFailsItClosed() throws {
        try SimulatedDevice.withBearerDroppedDuringAFetch(Self.scenario) { device, fetch throws in
            #expect(fetch.stderr.contains("warning: [modem0] the network dropped the bearer"), "\(fetch.stderr)")
            #expect(try device.run(["ip", "-4", "addr", "show", "dev", "wwan0"]).stdout.contains("inet ") == false)
            #expect(try device.run(["ip", "rule"]).stdout.contains("100.64.23.10") == false)
            #expect(
                try device.run(["mmcli", "-m", try Self.modemPath(device, port: "cdc-wdm0")]).stdout
                    .contains("/org/freedesktop/ModemManager1/Bearer/") == false)
        }
    }

    /// A SubscriberCheck whose bearer ModemManager brings up: verified, the chain from the
    /// bearer, the path naming ModemManager, and the bearer gone again afterwards.
    @Test func aSubscriberCheckThroughModemManager() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let checked = try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json"])
            #expect(checked.status == 0, "\(checked.stderr)")
            let json = try JSONValue.parse(checked.stdout)
            #expect(json["outcome"]?.string == "verified")
            #expect(json["path"]?["modem_backend"]?.string == "modemmanager")
            #expect(
                json["check_url"]?["hops"]?.array?.allSatisfy { $0["local_address"]?.string == "100.64.23.10" } == true)
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(
                try device.run(["mmcli", "-m", try Self.modemPath(device, port: "cdc-wdm0")]).stdout
                    .contains("/org/freedesktop/ModemManager1/Bearer/") == false)
        }
    }

    /// A lone QMI modem under ModemManager (auto picks it): the check verifies with its chain
    /// over the bearer and none of the bearer's packets on Wi-Fi. ModemManager set the firmware
    /// and `qmi/raw_ip` to raw IP; cellpath leaves them so (no packet dropped for a framing
    /// mismatch), and leaves no bearer, address, rule or route behind.
    @Test func aSubscriberCheckThroughModemManagerOnALoneQMIModem() throws {
        var scenario = Scenario.builtIn
        scenario.modems = [SimulatedModem(index: 0)]
        scenario.modems[0].protocol = .qmi
        scenario.modemManager = true
        try SimulatedDevice.with(scenario, connect: false) { device in
            let sys = try #require(try device.environment()["CELLPATH_SYSFS_ROOT"])
            let rawIP = "\(sys)/class/net/wwan0/qmi/raw_ip"
            #expect(FileSystem.readText(rawIP)?.hasPrefix("Y") == true, "\(FileSystem.readText(rawIP) ?? "none")")
            let mark = try device.requestLog().count
            let (checked, packets) = try device.capture(on: ["wlan0"]) {
                try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json", "-v"])
            }
            #expect(checked.status == 0, "\(checked.stderr)")
            let json = try JSONValue.parse(checked.stdout)
            #expect(json["outcome"]?.string == "verified", "\(checked.stdout)")
            #expect(json["path"]?["modem_backend"]?.string == "modemmanager")
            #expect(json["path"]?["dns_servers"]?.array?.compactMap(\.string) == ["100.64.0.53"], "\(checked.stdout)")
            #expect(
                checked.stderr.contains("data format") == false, "cellpath touched the data path: \(checked.stderr)")
            // The check_url chain (its GETs; the API's POST and PATCH go over Wi-Fi).
            let chain = try Array(device.requestLog().dropFirst(mark)).filter { $0["method"]?.string == "GET" }
            #expect(chain.count == 3, "\(chain)")
            #expect(chain.allSatisfy { $0["source"]?.string == "100.64.23.10" }, "\(chain)")
            let onWiFi = (packets["wlan0"] ?? []).filter { $0.contains(" 100.64.") }
            #expect(onWiFi == [], "the bearer's packets on wlan0: \(onWiFi)")

            let modem = try #require(try device.status()["modems"]?.array?[0])
            #expect(modem["bearer"]?.string == "disconnected")
            // (Packets after the bearer went down are dropped as bearerDisconnected, as on a real modem.)
            #expect(modem["counters"]?["uplink"]?["dropped"]?["linkLayerMismatch"] == nil, "\(modem)")
            #expect(FileSystem.readText(rawIP)?.hasPrefix("Y") == true, "\(FileSystem.readText(rawIP) ?? "none")")
            #expect(
                try device.run(["mmcli", "-m", try Self.modemPath(device, port: "cdc-wdm0")]).stdout
                    .contains("/org/freedesktop/ModemManager1/Bearer/") == false)
            #expect(try device.bearerLeftovers() == [])
        }
    }

    /// MBIM firmware that reports 0.0.0.0 as the bearer's DNS server: the direct backend refuses
    /// it (76); ModemManager drops it and reports none, which is the same refusal, at bring-up
    /// rather than at the check's first lookup; the check makes no request over the bearer, and
    /// nothing is left behind.
    @Test func aBearerWithoutADNSServerFailsWithTheDirectBackendsExitCode() throws {
        var scenario = Self.scenario
        scenario.modems[0].reportedIP = ReportedIPConfiguration(dnsServers: ["0.0.0.0"])
        var withoutModemManager = scenario
        withoutModemManager.modemManager = false
        let direct = try SimulatedDevice.with(withoutModemManager, connect: false) { device in
            try device.cellpath(["bearer", "up", "-m", "0"])
        }
        #expect(direct.status == 76, "\(direct.stderr)")
        try SimulatedDevice.with(scenario, connect: false) { device in
            let mark = try device.requestLog().count
            let checked = try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct"])
            #expect(checked.status == direct.status, "\(checked.stderr)")
            #expect(
                checked.stderr.contains("error: modem 0 reports no usable DNS server for its bearer: none\n"),
                "\(checked.stderr)")
            #expect(
                try device.requestLog().dropFirst(mark).allSatisfy {
                    $0["source"]?.string?.hasPrefix("100.64.") == false
                })
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(
                try device.run(["mmcli", "-m", try Self.modemPath(device, port: "cdc-wdm0")]).stdout
                    .contains("/org/freedesktop/ModemManager1/Bearer/") == false)
            #expect(try device.bearerLeftovers() == [])
        }
    }

    /// A wrong APN: the same exit code through ModemManager as through the direct backend (in a
    /// world without ModemManager), each with its own message; nothing is left behind.
    @Test func aWrongAPNFailsWithTheDirectBackendsExitCode() throws {
        let direct = try SimulatedDevice.with(connect: false) { device in
            try device.cellpath(["bearer", "up", "-m", "0", "--apn", "wrong.apn"])
        }
        #expect(direct.status == 69, "\(direct.stderr)")
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let refused = try device.cellpath(["bearer", "up", "-m", "0", "--apn", "wrong.apn"])
            #expect(refused.status == direct.status, "\(refused.stderr)")
            #expect(
                refused.stderr.hasPrefix(
                    "error: couldn't connect the bearer of cdc-wdm0 through ModemManager: the network refused it: "
                        + "missing or unknown APN (3GPP cause 27) (ModemManager: MobileEquipment.MissingOrUnknownApn)\n"
                        + "hint: check the APN (--apn): the network does not know it"), "\(refused.stderr)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(
                try device.run(["mmcli", "-m", try Self.modemPath(device, port: "cdc-wdm0")]).stdout
                    .contains("/org/freedesktop/ModemManager1/Bearer/") == false, "the failed bearer is deleted")
        }
    }

    /// The network rejects the connection (3GPP cause 33, service option not subscribed) on the
    /// MBIM and the QMI modem: 69 through ModemManager as through the direct backends, and neither
    /// a bearer nor an address is left behind.
    @Test func aRejectedConnectionFailsWithTheDirectBackendsExitCode() throws {
        var scenario = Self.scenario
        scenario.modems[0].faults.connectRejectCode = 33
        scenario.modems[1].faults.connectRejectCode = 33
        var withoutModemManager = scenario
        withoutModemManager.modemManager = false
        let direct = try SimulatedDevice.with(withoutModemManager, connect: false) { device in
            try [0, 1].map { try device.cellpath(["bearer", "up", "-m", "\($0)"]) }
        }
        #expect(direct.map(\.status) == [69, 69], "\(direct.map(\.stderr))")
        try SimulatedDevice.with(scenario, connect: false) { device in
            for (index, port) in [(0, "cdc-wdm0"), (1, "cdc-wdm1")] {
                let refused = try device.cellpath(["bearer", "up", "-m", "\(index)"])
                #expect(refused.status == direct[index].status, "modem \(index): \(refused.stderr)")
                #expect(
                    refused.stderr.hasPrefix("error: couldn't connect the bearer of \(port) through ModemManager: "),
                    "\(refused.stderr)")
                #expect(refused.stderr.contains("(ModemManager: "), "\(refused.stderr)")
                #expect(try device.status()["modems"]?.array?[index]["bearer"]?.string == "disconnected")
                #expect(
                    try device.run(["ip", "-4", "addr", "show", "dev", "wwan\(index)"]).stdout.contains("inet ")
                        == false)
                #expect(
                    try device.run(["mmcli", "-m", try Self.modemPath(device, port: port)]).stdout
                        .contains("/org/freedesktop/ModemManager1/Bearer/") == false, "the failed bearer is deleted")
            }
        }
    }

    /// Registration denied by the network: 69, as with the direct backend.
    @Test func aDeniedRegistrationFailsWithTheDirectBackendsExitCode() throws {
        var scenario = Self.scenario
        scenario.modems[0].faults.registration = .denied
        try SimulatedDevice.with(scenario, connect: false) { device in
            let denied = try device.cellpath(["bearer", "up", "-m", "0", "--timeout", "20"])
            #expect(denied.status == 69, "\(denied.stderr)")
            #expect(
                denied.stderr.hasPrefix("error: modem 0's registration was denied by the network"), "\(denied.stderr)")
        }
    }

    /// PIN1 through ModemManager (`Sim.SendPin`): a wrong PIN is refused with 77 (as the direct
    /// backends refuse it) and costs one attempt, the right one unlocks the SIM and the bearer comes up.
    @Test func theSIMPINGoesThroughModemManager() throws {
        var scenario = Self.scenario
        scenario.modems[0].sim?.pinLocked = true
        scenario.modems[0].sim?.pin = "1234"
        let wrong = "/tmp/\(getpid())-mm-wrong.pin", right = "/tmp/\(getpid())-mm-right.pin"
        defer { unlink(wrong); unlink(right) }
        for (file, pin) in [(wrong, "0000"), (right, "1234")] {
            let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            #expect(descriptor >= 0)
            _ = pin.utf8CString.withUnsafeBytes { write(descriptor, $0.baseAddress, pin.utf8.count) }
            close(descriptor)
        }
        try SimulatedDevice.with(scenario, connect: false) { device in
            let refused = try device.cellpath(["bearer", "up", "-m", "0", "--pin-file", wrong])
            #expect(refused.status == 77, "\(refused.stderr)")
            #expect(
                refused.stderr.hasPrefix(
                    "error: couldn't unlock the SIM of cdc-wdm0 through ModemManager: the SIM refused the PIN "
                        + "(ModemManager: MobileEquipment.IncorrectPassword)"), "\(refused.stderr)")
            let listed = try JSONValue.parse(try device.cellpath(["modems", "--json"]).stdout)
            #expect(listed["modems"]?.array?[0]["sim"]?["state"]?.string == "pin-required")
            #expect(listed["modems"]?.array?[0]["sim"]?["pin_retries"]?.int == 2)

            let up = try device.cellpath(["bearer", "up", "-m", "0", "--pin-file", right, "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            #expect(try JSONValue.parse(up.stdout)["ipv4_address"]?.string == "100.64.23.10")
            #expect(try device.cellpath(["bearer", "down", "-m", "0"]).status == 0)
        }
    }

    /// Ctrl-C after ModemManager took the PIN, while cellpath waits for it to initialise the
    /// unlocked modem (slow here: every answer of the modem comes 1.5 s late): the wait ends at
    /// once with 130, it does not run on until ModemManager is done.
    @Test func ctrlCEndsTheWaitAfterThePIN() throws {
        var scenario = Scenario.builtIn
        scenario.modems = [SimulatedModem(index: 0)]
        scenario.modems[0].sim?.pinLocked = true
        scenario.modems[0].sim?.pin = "1234"
        scenario.modems[0].faults.responseDelayMs = 1500
        scenario.modemManager = true
        let pinFile = "/tmp/\(getpid())-mm-ctrl-c.pin", output = "/tmp/\(getpid())-mm-ctrl-c.log"
        defer { unlink(pinFile); unlink(output) }
        let descriptor = open(pinFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #expect(descriptor >= 0)
        _ = "1234".withCString { write(descriptor, $0, 4) }
        close(descriptor)
        try SimulatedDevice.with(scenario, connect: false) { device in
            func unlockRequired() throws -> String? {
                let list = try device.run(["mmcli", "-L"]).stdout
                guard let path = list.split(separator: " ").first(where: { $0.contains("/Modem/") }) else { return nil }
                let shown = try device.run(["mmcli", "-m", String(path), "-K"]).stdout
                return shown.split(separator: "\n").first { $0.hasPrefix("modem.generic.unlock-required ") }?
                    .split(separator: ":").last?.trimmingCharacters(in: " ")
            }
            try #require(
                try Poll.until(timeout: .seconds(120), interval: .milliseconds(500)) {
                    try unlockRequired() == "sim-pin"
                },
                "ModemManager never reported the SIM locked")
            let up = try BackgroundProcess(
                [
                    CellpathBinary.path, "sim", "exec", "--prefix", device.prefix, "--", CellpathBinary.path,
                    "bearer", "up", "-m", "0", "--pin-file", pinFile, "--timeout", "120", "-v"
                ], output: output, environment: SimulatedDevice.path)
            defer { up.stop() }
            // ModemManager took the PIN: it re-initialises the modem, a request at a time.
            try #require(
                try Poll.until(timeout: .seconds(60), interval: .milliseconds(100)) {
                    try unlockRequired().map { $0 != "sim-pin" } ?? false
                }, "the PIN was never taken: \(FileSystem.readText(output) ?? "")")
            usleep(1_000_000)
            let interrupted = ContinuousClock.now
            kill(up.pid, SIGINT)
            let ended = up.wait(timeoutMs: 60_000)
            let waited = ContinuousClock.now - interrupted
            #expect(
                ended && up.exitStatus == 130,
                "\(String(describing: up.exitStatus)): \(FileSystem.readText(output) ?? "")")
            print("bearer up ended \(waited) after Ctrl-C")
            #expect(waited < .seconds(3), "Ctrl-C took \(waited)")
        }
    }

    /// The D-Bus path of the ModemManager modem whose primary port is `port`.
    static func modemPath(_ device: SimulatedDevice, port: String) throws -> String {
        let list = try device.run(["mmcli", "-L"])
        let paths = list.stdout.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("/org/freedesktop/ModemManager1/Modem/") }.map(String.init)
        }
        return try #require(
            try paths.first { try device.run(["mmcli", "-m", $0]).stdout.contains("primary port: \(port)") },
            "\(list.stdout)")
    }
}
