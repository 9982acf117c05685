import CellpathCore
import Glibc
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// `cellpath bearer up | status | down`, the built binary in a namespace of the test's own
/// (`DeviceNamespace`) against simulated modems in this process, on both protocols: the path it
/// brings up, reuse of a bearer another client connected, every modem fault of the simulator
/// (exit code, message, and nothing left behind: no address, route, rule, rp_filter change,
/// record, QMI client ID or connected bearer), and Ctrl-C at each step. Root. Every test has a
/// namespace, modems, run and state directories of its own: they run side by side.
@Suite(
    .timeLimit(.minutes(10)), .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)),
    .ownThreads(.worlds))
struct BearerCommandTests {
    static let protocols: [SimulatorScenario.ModemProtocol] = [.mbim, .qmi]

    /// One modem of `kind` with `faults` (and `sim`), and the namespace.
    static func setUp(
        _ kind: SimulatorScenario.ModemProtocol, faults: ModemFaults = ModemFaults(),
        sim: SimulatedSIM?? = nil
    ) throws -> (SimulatedFleet, DeviceNamespace) {
        (try SimulatedFleet([.test(kind, 1, faults: faults, sim: sim)]), try DeviceNamespace())
    }

    /// `cellpath bearer ARGS… --no-proxy` inside the namespace.
    static func bearer(
        _ namespace: DeviceNamespace, _ fleet: SimulatedFleet, _ arguments: [String]
    ) throws -> ProcessResult {
        try namespace.cellpath(["bearer"] + arguments + ["--no-proxy"], fleet)
    }

    /// Nothing of cellpath's is left: on the interface, in the records, in the modem.
    static func expectNothingLeft(
        _ namespace: DeviceNamespace, _ fleet: SimulatedFleet, _ comment: Comment? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(try namespace.leftovers("wwan0") == [], comment, sourceLocation: sourceLocation)
        #expect(
            eventually { fleet.device(0).allocatedQMIClientIDs == 0 }, "QMI client IDs left allocated",
            sourceLocation: sourceLocation)
        #expect(
            eventually { !fleet.device(0).isBearerConnected }, "the bearer is still connected",
            sourceLocation: sourceLocation)
    }

    // MARK: Up, status, down

    @Test(arguments: protocols)
    func upStatusDown(_ kind: SimulatorScenario.ModemProtocol) throws {
        let (fleet, namespace) = try Self.setUp(kind)
        let up = try Self.bearer(namespace, fleet, ["up", "--json"])
        #expect(up.status == 0, "\(up.stderr)")
        let path = try JSONValue.parse(up.stdout)
        #expect(path["interface"]?.string == "wwan0" && path["state"]?.string == "connected")
        #expect(path["ipv4_address"]?.string == "100.64.23.10")
        #expect(path["gateway"]?.string == "100.64.0.1")
        #expect(path["dns_servers"]?.array?.compactMap(\.string) == ["100.64.0.53"])
        #expect(path["mtu"]?.int == 1500)
        #expect(path["operator"]?["id"]?.string == "234-15" && path["registration"]?.string == "home")
        #expect(path["brought_up_by"]?.string == "cellpath" && path["reused"]?.bool == false)
        #expect(fleet.device(0).isBearerConnected)
        // The interface as the HTTP engine relies on it (docs/fetch.md).
        #expect(try namespace.shell("ip -4 addr show dev wwan0").contains("inet 100.64.23.10/32"))
        #expect(try namespace.shell("ip rule").contains("from 100.64.23.10 lookup"))
        #expect(try namespace.shell("ip route show default").contains("default dev wwan0"))
        #expect(try namespace.shell("ip route get 198.51.100.7").contains("dev wlan0"), "unbound traffic keeps Wi-Fi")
        #expect(try namespace.shell("cat /proc/sys/net/ipv4/conf/wwan0/rp_filter") == "2\n")
        // QMI: the WDS client that started the call stays allocated while the call is up.
        #expect(eventually { fleet.device(0).allocatedQMIClientIDs == (kind == .qmi ? 1 : 0) })

        let status = try Self.bearer(namespace, fleet, ["status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        let shown = try JSONValue.parse(status.stdout)
        #expect(shown["state"]?.string == "connected" && shown["ipv4_address"]?.string == "100.64.23.10")
        #expect(shown["brought_up_by"]?.string == "cellpath" && shown["uptime_s"]?.int != nil)
        #expect(shown["bytes_received"]?.int != nil && shown["bytes_sent"]?.int != nil)

        // Up again: the same bearer, reused, still cellpath's.
        let again = try Self.bearer(namespace, fleet, ["up", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try JSONValue.parse(again.stdout)["reused"]?.bool == true)
        #expect(try JSONValue.parse(again.stdout)["brought_up_by"]?.string == "cellpath")

        let down = try Self.bearer(namespace, fleet, ["down"])
        #expect(down.status == 0, "\(down.stderr)")
        #expect(
            down.stdout.hasPrefix("modem 0: bearer disconnected, cellpath's configuration of wwan0 removed\n"),
            "\(down.stdout)")
        try Self.expectNothingLeft(namespace, fleet)
        // Idempotent.
        let twice = try Self.bearer(namespace, fleet, ["down", "--json"])
        #expect(twice.status == 0, "\(twice.stderr)")
        #expect(try JSONValue.parse(twice.stdout)["bearer"]?.string == "already-down")
        let after = try JSONValue.parse(try Self.bearer(namespace, fleet, ["status", "--json"]).stdout)
        #expect(after["state"]?.string == "disconnected" && after["ipv4_address"] == .null)
    }

    /// A bearer that another client connected through the proxy (as ModemManager would) is
    /// reused and configured; `down` removes cellpath's configuration and leaves the bearer up;
    /// `down --force` disconnects it.
    @Test(arguments: protocols)
    func aBearerConnectedByAnotherClientIsReusedAndLeftUp(_ kind: SimulatorScenario.ModemProtocol) throws {
        let (fleet, namespace) = try Self.setUp(kind)
        let port = try #require(fleet.device(0).devicePath)
        let connect =
            kind == .mbim
            ? try namespace.run(["mbimcli", "-p", "-d", port, "--connect=apn=internet", "--no-close"])
            : try namespace.run([
                "qmicli", "-p", "-d", port, "--device-open-qmi", "--wds-start-network=apn=internet,ip-type=4",
                "--client-no-release-cid"
            ])
        #expect(connect.status == 0, "\(connect.stderr)")
        let qmicliClients = fleet.device(0).allocatedQMIClientIDs  // qmicli keeps its WDS client, as asked

        let up = try namespace.cellpath(["bearer", "up", "--apn", "internet", "--json"], fleet)
        #expect(up.status == 0, "\(up.stderr)")
        let path = try JSONValue.parse(up.stdout)
        #expect(path["reused"]?.bool == true && path["brought_up_by"]?.string == "another program")
        #expect(path["ipv4_address"]?.string == "100.64.23.10")
        #expect(try namespace.shell("ip -4 addr show dev wwan0").contains("inet 100.64.23.10/32"))

        let down = try namespace.cellpath(["bearer", "down", "--json"], fleet)
        #expect(down.status == 0, "\(down.stderr)")
        let result = try JSONValue.parse(down.stdout)
        #expect(result["bearer"]?.string == "left-connected" && result["configuration_removed"]?.bool == true)
        #expect(fleet.device(0).isBearerConnected, "down must leave another program's bearer up")
        #expect(try namespace.leftovers("wwan0") == [])
        #expect(eventually { fleet.device(0).allocatedQMIClientIDs == qmicliClients })

        // --force: MBIM deactivates the context; QMI stops a call only with its handle, which
        // only the program that started it knows.
        let forced = try namespace.cellpath(["bearer", "down", "--force", "--json"], fleet)
        if kind == .mbim {
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(try JSONValue.parse(forced.stdout)["bearer"]?.string == "disconnected")
            #expect(eventually { !fleet.device(0).isBearerConnected })
        } else {
            #expect(forced.status == 69)
            #expect(
                forced.stderr.contains(
                    "error: couldn't stop the network of cdc-wdm0: the call's packet data handle is unknown"),
                "\(forced.stderr)")
            #expect(fleet.device(0).isBearerConnected)
        }
        #expect(
            eventually { fleet.device(0).allocatedQMIClientIDs == qmicliClients },
            "cellpath's own client IDs are released")
    }

    /// `status --watch --json` prints a JSON line at the start and one when the network drops
    /// the bearer, told by the modem's indication (QMI: sent to the client that started the call,
    /// which the watch listens on), not found by reading the modem again; Ctrl-C ends it with 0.
    @Test(arguments: protocols)
    func statusWatchFollowsTheModem(_ kind: SimulatorScenario.ModemProtocol) throws {
        let (fleet, namespace) = try Self.setUp(kind)
        #expect(try Self.bearer(namespace, fleet, ["up"]).status == 0)
        let output = "\(namespace.stateDirectory)-watch"
        defer { unlink(output) }
        let watch = try namespace.start(
            ["bearer", "status", "--watch", "--json", "--no-proxy", "-v"], fleet, output: output)
        #expect(waitForText(#""state": "connected""#, in: output))
        fleet.device(0).dropBearer()
        #expect(waitForText(#""state": "disconnected""#, in: output))
        #expect(
            (FileSystem.readText(output) ?? "").contains("indication: bearer disconnected"),
            "the drop came by indication")
        kill(watch.pid, SIGINT)
        #expect(watch.wait(timeoutMs: 30_000))
        #expect(watch.exitStatus == 0)
        let lines = (FileSystem.readText(output) ?? "").split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(lines.count == 2, "\(lines)")
        #expect(try lines.map { try JSONValue.parse(String($0))["state"]?.string } == ["connected", "disconnected"])
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        try Self.expectNothingLeft(namespace, fleet)
    }

    /// A QMI dual-stack bearer is two calls, each telling its changes to the client that started
    /// it: a watch in another process listens on both client IDs, so an IPv6 call that the
    /// network ends alone is told (by indication, not by reading again) and IPv4 stays.
    @Test func statusWatchFollowsBothCallsOfADualStackQMIBearer() throws {
        let fleet = try SimulatedFleet([.test(.qmi, 1, ipType: .ipv4v6)])
        let namespace = try DeviceNamespace()
        let up = try Self.bearer(namespace, fleet, ["up", "--json"])
        #expect(up.status == 0, "\(up.stderr)")
        let output = "\(namespace.stateDirectory)-watch"
        defer { unlink(output) }
        let watch = try namespace.start(
            ["bearer", "status", "--watch", "--json", "--no-proxy", "-v"], fleet, output: output)
        #expect(waitForText(#""ipv6_address": "2001:db8:64:10::2""#, in: output), "the watch shows the IPv6 call")
        #expect(waitForText("following the call of WDS client ID", in: output))
        let followed = (FileSystem.readText(output) ?? "").split(separator: "\n").filter {
            $0.contains("following the call of WDS client ID")
        }
        #expect(followed.count == 2, "\(followed)")
        fleet.device(0).dropBearer(family: .ipv6)
        #expect(waitForText("indication: bearer disconnected", in: output), "the IPv6 call's end came by indication")
        #expect(waitForText(#""ipv6_address": null"#, in: output), "the watch shows the bearer without IPv6")
        let lines = (FileSystem.readText(output) ?? "").split(separator: "\n").filter { $0.hasPrefix("{") }
        let last = try JSONValue.parse(String(lines.last ?? ""))
        #expect(
            last["state"]?.string == "connected" && last["ipv4_address"]?.string == "100.64.23.10",
            "IPv4 stays: \(lines)")
        kill(watch.pid, SIGINT)
        #expect(watch.wait(timeoutMs: 30_000))
        #expect(watch.exitStatus == 0)
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        try Self.expectNothingLeft(namespace, fleet)
    }

    @Test(arguments: protocols)
    func aBearerOnAnotherAPNIsNotReused(_ kind: SimulatorScenario.ModemProtocol) throws {
        let (fleet, namespace) = try Self.setUp(kind)
        #expect(try Self.bearer(namespace, fleet, ["up", "--apn", "internet"]).status == 0)
        let other = try Self.bearer(namespace, fleet, ["up", "--apn", "ims"])
        #expect(other.status == 69)
        #expect(
            other.stderr.contains("error: modem 0's bearer is connected on APN internet, not ims\n"), "\(other.stderr)")
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        try Self.expectNothingLeft(namespace, fleet)
    }

    /// Without --apn, the configuration's `modem.apn` (here CELLPATH_APN) is what the modem is
    /// asked for: the simulated network refuses an APN it does not know (3GPP cause 27), and
    /// connects the one it knows; --apn wins over it, an empty --apn is the provisioned context.
    @Test(arguments: protocols)
    func theConfiguredAPNReachesTheModem(_ kind: SimulatorScenario.ModemProtocol) throws {
        let (fleet, namespace) = try Self.setUp(kind)
        let unknown = try namespace.cellpath(
            ["bearer", "up", "--no-proxy"], fleet, environment: ["CELLPATH_APN": "nope"])
        #expect(unknown.status == 69 && unknown.stderr.contains("(3GPP cause 27)"), "\(unknown.stderr)")
        try Self.expectNothingLeft(namespace, fleet)

        let overridden = try namespace.cellpath(
            ["bearer", "up", "--no-proxy", "--apn", "internet", "--json"], fleet,
            environment: ["CELLPATH_APN": "nope"])
        #expect(overridden.status == 0, "\(overridden.stderr)")
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        let provisioned = try namespace.cellpath(
            ["bearer", "up", "--no-proxy", "--apn", ""], fleet, environment: ["CELLPATH_APN": "nope"])
        #expect(provisioned.status == 0, "\(provisioned.stderr)")
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)

        let known = try namespace.cellpath(
            ["bearer", "up", "--no-proxy", "--json"], fleet, environment: ["CELLPATH_APN": "internet"])
        #expect(known.status == 0, "\(known.stderr)")
        #expect(try JSONValue.parse(known.stdout)["apn"]?.string == "internet")
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)

        let invalid = try namespace.cellpath(
            ["bearer", "up", "--no-proxy"], fleet, environment: ["CELLPATH_APN": "my apn"])
        #expect(
            invalid.status == 78 && invalid.stderr.contains("error: environment CELLPATH_APN: invalid value 'my apn'"),
            "\(invalid.stderr)")
        try Self.expectNothingLeft(namespace, fleet)
    }

    // MARK: Faults

    /// `bearer up` against a fault: its exit code and message, and nothing left behind.
    func fails(
        _ kind: SimulatorScenario.ModemProtocol, faults: ModemFaults = ModemFaults(), sim: SimulatedSIM?? = nil,
        arguments: [String] = [], status: Int32, message: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (SimulatedFleet, ProcessResult) {
        let (fleet, namespace) = try Self.setUp(kind, faults: faults, sim: sim)
        let up = try Self.bearer(namespace, fleet, ["up"] + arguments)
        #expect(up.status == status, "\(up.stderr)", sourceLocation: sourceLocation)
        #expect(up.stderr.contains(message), "\(up.stderr)", sourceLocation: sourceLocation)
        #expect(up.stdout == "", sourceLocation: sourceLocation)
        try Self.expectNothingLeft(namespace, fleet, sourceLocation: sourceLocation)
        return (fleet, up)
    }

    @Test(arguments: protocols)
    func noSIM(_ kind: SimulatorScenario.ModemProtocol) throws {
        _ = try fails(kind, sim: .some(nil), status: 69, message: "error: modem 0 has no SIM\n")
    }

    @Test(arguments: protocols)
    func aPINLockedSIMWithoutAPINFile(_ kind: SimulatorScenario.ModemProtocol) throws {
        let sim = SimulatedSIM(
            iccid: "8944000000000000001", imsi: "234150000000001", pinLocked: true, pin: "4321", pinAttemptsLeft: 3)
        _ = try fails(
            kind, sim: sim, status: 77,
            message:
                "error: modem 0's SIM is locked by its PIN (3 attempts left)\nhint: give the PIN in a file: --pin-file FILE\n"
        )
    }

    @Test(arguments: protocols)
    func thePINFromItsFileUnlocksTheSIM(_ kind: SimulatorScenario.ModemProtocol) throws {
        let sim = SimulatedSIM(
            iccid: "8944000000000000001", imsi: "234150000000001", pinLocked: true, pin: "4321", pinAttemptsLeft: 3)
        let (fleet, namespace) = try Self.setUp(kind, sim: sim)
        let file = "\(namespace.stateDirectory)-pin"
        #expect(try ProcessRunner.run(["sh", "-c", "printf '4321\\n' > \(file)"]).status == 0)
        defer { unlink(file) }
        let up = try Self.bearer(namespace, fleet, ["up", "--pin-file", file, "-v"])
        #expect(up.status == 0, "\(up.stderr)")
        #expect(up.stderr.contains("info: [modem0] PIN accepted\n"))
        #expect(!up.stderr.contains("4321"), "the PIN is never logged")
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        try Self.expectNothingLeft(namespace, fleet)
    }

    @Test(arguments: protocols)
    func aWrongPINIsRefusedWithTheAttemptsLeft(_ kind: SimulatorScenario.ModemProtocol) throws {
        let sim = SimulatedSIM(
            iccid: "8944000000000000001", imsi: "234150000000001", pinLocked: true, pin: "4321", pinAttemptsLeft: 3)
        // One file per case: the cases run at once, and each removes its own at the end.
        let file = "/tmp/cellpath-wrong-pin-\(getpid())-\(kind)"
        #expect(try ProcessRunner.run(["sh", "-c", "echo 1111 > \(file)"]).status == 0)
        defer { unlink(file) }
        let (fleet, _) = try fails(
            kind, sim: sim, arguments: ["--pin-file", file], status: 77,
            message: "the SIM refused the PIN (2 attempts left)")
        #expect(fleet.device(0).controlStatus?.pinAttemptsLeft == 2)
    }

    /// No PIN attempt is spent when fewer than 2 are left, even with the right PIN.
    @Test(arguments: protocols)
    func theLastPINAttemptIsNeverSpent(_ kind: SimulatorScenario.ModemProtocol) throws {
        let sim = SimulatedSIM(
            iccid: "8944000000000000001", imsi: "234150000000001", pinLocked: true, pin: "4321", pinAttemptsLeft: 1)
        let file = "/tmp/cellpath-last-pin-\(getpid())-\(kind)"
        #expect(try ProcessRunner.run(["sh", "-c", "echo 4321 > \(file)"]).status == 0)
        defer { unlink(file) }
        let (fleet, _) = try fails(
            kind, sim: sim, arguments: ["--pin-file", file], status: 77,
            message:
                "locked by its PIN (1 attempt left): cellpath does not spend a PIN attempt when fewer than 2 are left")
        #expect(fleet.device(0).controlStatus?.pinAttemptsLeft == 1)
        #expect(fleet.device(0).controlStatus?.pin == .required)
    }

    /// The radio off is switched on, and off again when the run fails later.
    @Test(arguments: protocols)
    func theRadioIsSwitchedOnAndBackOffOnFailure(_ kind: SimulatorScenario.ModemProtocol) throws {
        var faults = ModemFaults()
        faults.radioOff = true
        let (fleet, namespace) = try Self.setUp(kind, faults: faults)
        let up = try Self.bearer(namespace, fleet, ["up", "-v"])
        #expect(up.status == 0, "\(up.stderr)")
        #expect(up.stderr.contains("info: [modem0] radio switched on\n"))
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        try Self.expectNothingLeft(namespace, fleet)

        faults.connectRejectCode = 33
        let (rejected, _) = try fails(kind, faults: faults, status: 69, message: "3GPP cause 33")
        #expect(
            eventually { rejected.device(0).controlStatus?.radio == .off },
            "the radio this run switched on is off again")
    }

    @Test(arguments: protocols)
    func aDeniedRegistration(_ kind: SimulatorScenario.ModemProtocol) throws {
        var faults = ModemFaults()
        faults.registration = .denied
        _ = try fails(
            kind, faults: faults, status: 69, message: "error: modem 0's registration was denied by the network")
    }

    @Test(arguments: protocols)
    func searchingUntilTheTimeout(_ kind: SimulatorScenario.ModemProtocol) throws {
        var faults = ModemFaults()
        faults.registration = .searching
        _ = try fails(
            kind, faults: faults, arguments: ["--timeout", "1"], status: 75,
            message: "error: modem 0 is not registered (searching) after waiting for it")
        // The radio this run switched on goes off again, although the run's time is up.
        faults.radioOff = true
        let (fleet, _) = try fails(
            kind, faults: faults, arguments: ["--timeout", "1"], status: 75,
            message: "error: modem 0 is not registered (searching) after waiting for it")
        #expect(eventually { fleet.device(0).controlStatus?.radio == .off })
    }

    /// Registration that comes while waiting is followed through the modem's indication.
    @Test(arguments: protocols)
    func aRegistrationThatComesWhileWaiting(_ kind: SimulatorScenario.ModemProtocol) throws {
        var faults = ModemFaults()
        faults.registration = .searching
        let (fleet, namespace) = try Self.setUp(kind, faults: faults)
        let output = "\(namespace.stateDirectory)-out"
        defer { unlink(output) }
        let up = try namespace.start(["bearer", "up", "--no-proxy", "-v", "--timeout", "60"], fleet, output: output)
        #expect(waitForText("not registered yet (searching): waiting for the network", in: output))
        fleet.device(0).setRegistration(.registered)
        #expect(up.wait(timeoutMs: 30_000))
        #expect(up.exitStatus == 0, "\(FileSystem.readText(output) ?? "")")
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        try Self.expectNothingLeft(namespace, fleet)
    }

    @Test(arguments: protocols)
    func aRejectedConnection(_ kind: SimulatorScenario.ModemProtocol) throws {
        var faults = ModemFaults()
        faults.connectRejectCode = 33
        let (_, up) = try fails(kind, faults: faults, status: 69, message: "the network refused it: ")
        #expect(up.stderr.contains("(3GPP cause 33)"), "\(up.stderr)")
        let unknownAPN = try fails(kind, arguments: ["--apn", "nope"], status: 69, message: "(3GPP cause 27)").1
        #expect(unknownAPN.stderr.contains("hint: check the APN (--apn): the network does not know it\n"))
    }

    @Test(arguments: protocols)
    func slowAnswersWithinTheTime(_ kind: SimulatorScenario.ModemProtocol) throws {
        var faults = ModemFaults()
        faults.responseDelayMs = 100
        let (fleet, namespace) = try Self.setUp(kind, faults: faults)
        let up = try Self.bearer(namespace, fleet, ["up", "--timeout", "60"])
        #expect(up.status == 0, "\(up.stderr)")
        #expect(try Self.bearer(namespace, fleet, ["down", "--timeout", "60"]).status == 0)
        try Self.expectNothingLeft(namespace, fleet)
    }

    @Test(arguments: protocols)
    func answersSlowerThanTheTimeout(_ kind: SimulatorScenario.ModemProtocol) throws {
        var faults = ModemFaults()
        faults.responseDelayMs = 400
        _ = try fails(
            kind, faults: faults, arguments: ["--timeout", "1.5"], status: 75, message: "no answer within 1.5 s")
    }

    @Test(arguments: protocols)
    func garbageFramesAreSkipped(_ kind: SimulatorScenario.ModemProtocol) throws {
        var faults = ModemFaults()
        faults.garbageFrames = 3
        let (fleet, namespace) = try Self.setUp(kind, faults: faults)
        #expect(try Self.bearer(namespace, fleet, ["up"]).status == 0)
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        try Self.expectNothingLeft(namespace, fleet)
    }

    /// The network drops the bearer after it is up: status says so, down removes cellpath's
    /// configuration (the bearer is down already).
    @Test(arguments: protocols)
    func aBearerDroppedByTheNetwork(_ kind: SimulatorScenario.ModemProtocol) throws {
        var faults = ModemFaults()
        faults.dropBearerAfterSeconds = 1
        let (fleet, namespace) = try Self.setUp(kind, faults: faults)
        #expect(try Self.bearer(namespace, fleet, ["up"]).status == 0)
        #expect(eventually { !fleet.device(0).isBearerConnected })
        let status = try JSONValue.parse(try Self.bearer(namespace, fleet, ["status", "--json"]).stdout)
        #expect(status["state"]?.string == "disconnected")
        let down = try Self.bearer(namespace, fleet, ["down", "--json"])
        #expect(down.status == 0, "\(down.stderr)")
        let result = try JSONValue.parse(down.stdout)
        #expect(result["bearer"]?.string == "already-down" && result["configuration_removed"]?.bool == true)
        try Self.expectNothingLeft(namespace, fleet)

        // Up after a drop that nobody took down: the stale configuration and client ID go first.
        #expect(try Self.bearer(namespace, fleet, ["up"]).status == 0)
        #expect(eventually { !fleet.device(0).isBearerConnected })
        let again = try Self.bearer(namespace, fleet, ["up", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try JSONValue.parse(again.stdout)["reused"]?.bool == false)
        #expect(
            eventually { fleet.device(0).allocatedQMIClientIDs <= (kind == .qmi ? 1 : 0) },
            "the dropped call's client ID is released")
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        try Self.expectNothingLeft(namespace, fleet)
    }

    /// The modem is unplugged while the bearer comes up: the error says the port vanished, and
    /// what was configured is removed.
    @Test(arguments: protocols)
    func unpluggedMidCommand(_ kind: SimulatorScenario.ModemProtocol) throws {
        var faults = ModemFaults()
        faults.responseDelayMs = 300
        let (fleet, namespace) = try Self.setUp(kind, faults: faults)
        let output = "\(namespace.stateDirectory)-out"
        defer { unlink(output) }
        let up = try namespace.start(["bearer", "up", "--no-proxy", "-v", "--timeout", "60"], fleet, output: output)
        #expect(waitForText("info: [modem0] bearer connected", in: output))
        fleet.device(0).unplug()
        #expect(up.wait(timeoutMs: 30_000))
        let log = FileSystem.readText(output) ?? ""
        #expect(up.exitStatus == 69, "\(log)")
        #expect(log.contains("vanished (the modem was unplugged or reset)"), "\(log)")
        #expect(try namespace.leftovers("wwan0") == [])
        #expect(!fleet.device(0).isBearerConnected)
    }

    /// Ctrl-C at each step of `up` that talks to the modem undoes everything this run did (the
    /// interface's steps that follow the IP configuration take no time to cancel in).
    @Test(
        arguments: protocols,
        [
            "info: [modem0] SIM ready", "radio switched on", "registered (home)", "packet service attached",
            "bearer connected"
        ])
    func ctrlCAtEachStepLeavesNothingBehind(_ kind: SimulatorScenario.ModemProtocol, _ after: String) throws {
        var faults = ModemFaults()
        faults.responseDelayMs = 250
        faults.radioOff = true
        let (fleet, namespace) = try Self.setUp(kind, faults: faults)
        let output = "\(namespace.stateDirectory)-out"
        defer { unlink(output) }
        let up = try namespace.start(["bearer", "up", "--no-proxy", "-v", "--timeout", "60"], fleet, output: output)
        #expect(waitForText(after, in: output))
        kill(up.pid, SIGINT)
        #expect(up.wait(timeoutMs: 30_000))
        let log = FileSystem.readText(output) ?? ""
        #expect(up.exitStatus == 130, "\(log)")
        #expect(log.contains("error: cancelled while "), "\(log)")
        try Self.expectNothingLeft(namespace, fleet, "\(log)")
        #expect(
            eventually { fleet.device(0).controlStatus?.radio == .off }, "the radio this run switched on is off again")
    }

    // MARK: Command line

    @Test func withoutCAPNETADMINNothingIsTouchedAndTheExitCodeIs77() throws {
        let (fleet, namespace) = try Self.setUp(.mbim)
        let denied = try namespace.cellpath(
            ["bearer", "up", "--no-proxy"], fleet,
            prefix: ["setpriv", "--bounding-set", "-net_admin", "--inh-caps", "-net_admin"])
        #expect(denied.status == 77, "\(denied.stderr)")
        #expect(
            denied.stderr.hasPrefix(
                "error: cellpath bearer up needs CAP_NET_ADMIN, which this process does not have\nhint: run it with sudo"
            ))
        #expect(!fleet.device(0).isBearerConnected)
        try Self.expectNothingLeft(namespace, fleet)
    }

    /// The simulated network of the default scenario is IPv4-only: IPv6 alone is refused with
    /// the network's cause (50, PDP type IPv4 only allowed), and nothing stays.
    @Test(arguments: protocols)
    func ipv6OnAnIPv4OnlyNetworkIsRefusedWithTheNetworksCause(_ kind: SimulatorScenario.ModemProtocol) throws {
        let (fleet, namespace) = try Self.setUp(kind)
        let result = try Self.bearer(namespace, fleet, ["up", "--ip-type", "ipv6"])
        #expect(result.status == 69, "\(result.stderr)")
        #expect(
            result.stderr.contains("(3GPP cause 50)")
                && result.stderr.contains("hint: the network allows IPv4 only on this APN: use --ip-type ipv4"),
            "\(result.stderr)")
        #expect(!fleet.device(0).isBearerConnected)
        // The configuration's modem.ip_type (here CELLPATH_IP_TYPE) is what the modem is asked for without --ip-type.
        let configured = try namespace.cellpath(
            ["bearer", "up", "--no-proxy"], fleet, environment: ["CELLPATH_IP_TYPE": "ipv6"])
        #expect(configured.status == 69 && configured.stderr.contains("(3GPP cause 50)"), "\(configured.stderr)")
        try Self.expectNothingLeft(namespace, fleet)
    }

    /// Dual stack (the default) on an IPv4-only network is narrowed to IPv4: the bearer comes up
    /// with its IPv4 address and no IPv6 (QMI: the IPv6 call is refused, its client released).
    @Test(arguments: protocols)
    func dualStackOnAnIPv4OnlyNetworkNarrowsToIPv4(_ kind: SimulatorScenario.ModemProtocol) throws {
        let (fleet, namespace) = try Self.setUp(kind)
        let up = try namespace.cellpath(["bearer", "up", "--ip-type", "ipv4v6", "--no-proxy", "--json"], fleet)
        #expect(up.status == 0, "\(up.stderr)")
        let path = try JSONValue.parse(up.stdout)
        #expect(path["ipv4_address"]?.string == "100.64.23.10" && path["ipv6_address"] == .null, "\(up.stdout)")
        #expect(try namespace.shell("ip -6 addr show dev wwan0 scope global").isEmpty)
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        try Self.expectNothingLeft(namespace, fleet)
    }

    /// A network that offers `network`, asked for the default (ipv4v6): the bearer comes up with
    /// what the network grants, configured on wwan0 per family (address, source rule, default
    /// route worse than Wi-Fi's), `bearer status` reads it back, `bearer down` removes all of it
    /// (QMI: both calls stopped, both client IDs released).
    @Test(arguments: [
        (SimulatorScenario.ModemProtocol.mbim, BearerIPType.ipv6), (.qmi, .ipv6), (.mbim, .ipv4v6), (.qmi, .ipv4v6)
    ])
    func anIPv6OrDualStackNetworkGrantsWhatItOffers(
        _ kind: SimulatorScenario.ModemProtocol, _ network: BearerIPType
    ) throws {
        let fleet = try SimulatedFleet([.test(kind, 1, ipType: network)])
        let namespace = try DeviceNamespace()
        let up = try namespace.cellpath(["bearer", "up", "--no-proxy", "--json"], fleet)
        #expect(up.status == 0, "\(up.stderr)")
        let path = try JSONValue.parse(up.stdout)
        #expect(
            path["ipv6_address"]?.string == "2001:db8:64:10::2" && path["ipv6_prefix_length"]?.int == 64, "\(up.stdout)"
        )
        #expect(path["ipv6_gateway"]?.string == "2001:db8:64:10::1")
        #expect(path["ipv4_address"]?.string == (network == .ipv4v6 ? "100.64.23.10" : nil), "\(up.stdout)")
        let dns = path["dns_servers"]?.array?.compactMap(\.string) ?? []
        #expect(dns == (network == .ipv4v6 ? ["100.64.0.53", "2001:db8:64::53"] : ["2001:db8:64::53"]), "\(dns)")
        #expect(try namespace.shell("ip -6 addr show dev wwan0 scope global").contains("inet6 2001:db8:64:10::2/64"))
        #expect(try namespace.shell("ip -6 rule").contains("from 2001:db8:64:10::2 lookup"))
        #expect(try namespace.shell("ip -6 route get 2001:db8:113::10 from 2001:db8:64:10::2").contains("dev wwan0"))
        #expect(
            try namespace.shell("ip -4 addr show dev wwan0").contains("inet 100.64.23.10/32") == (network == .ipv4v6))
        if kind == .qmi {
            #expect(
                fleet.device(0).allocatedQMIClientIDs == (network == .ipv4v6 ? 2 : 1), "the calls' clients are kept")
        }

        let status = try namespace.cellpath(["bearer", "status", "--no-proxy", "--json"], fleet)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(try JSONValue.parse(status.stdout)["ipv6_address"]?.string == "2001:db8:64:10::2", "\(status.stdout)")
        // Another process's listing shows both families too (QMI: the IPv6 call's settings are on its own client).
        let listing = try namespace.cellpath(["modems", "show", "--no-proxy", "--json"], fleet)
        #expect(listing.status == 0, "\(listing.stderr)")
        let bearer = try JSONValue.parse(listing.stdout)["bearer"]
        #expect(bearer?["ipv6_address"]?.string == "2001:db8:64:10::2", "\(listing.stdout)")
        #expect(bearer?["ipv4_address"]?.string == (network == .ipv4v6 ? "100.64.23.10" : nil), "\(listing.stdout)")

        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        try Self.expectNothingLeft(namespace, fleet)
    }

    /// An IPv6-only network refuses IPv4 alone with its cause (51, PDP type IPv6 only allowed).
    @Test(arguments: protocols)
    func ipv4OnAnIPv6OnlyNetworkIsRefusedWithTheNetworksCause(_ kind: SimulatorScenario.ModemProtocol) throws {
        let fleet = try SimulatedFleet([.test(kind, 1, ipType: .ipv6)])
        let namespace = try DeviceNamespace()
        let result = try Self.bearer(namespace, fleet, ["up", "--ip-type", "ipv4"])
        #expect(result.status == 69, "\(result.stderr)")
        #expect(
            result.stderr.contains("(3GPP cause 51)") && result.stderr.contains("use --ip-type ipv6"),
            "\(result.stderr)")
        try Self.expectNothingLeft(namespace, fleet)
    }

    @Test func thePasswordComesFromAFileOrTheEnvironmentAndIsNeverShown() throws {
        let (fleet, namespace) = try Self.setUp(.mbim)
        let file = "\(namespace.stateDirectory)-password"
        #expect(try ProcessRunner.run(["sh", "-c", "echo s3cret-pass > \(file)"]).status == 0)
        defer { unlink(file) }
        let up = try Self.bearer(namespace, fleet, ["up", "--user", "alice", "--password-file", file, "-v"])
        #expect(up.status == 0, "\(up.stderr)")
        #expect(!up.stderr.contains("s3cret-pass") && !up.stdout.contains("s3cret-pass"))
        #expect(up.stderr.contains("AuthProtocol = 'chap'"), "--user without --auth is CHAP")
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        let fromEnvironment = try namespace.cellpath(
            ["bearer", "up", "--no-proxy", "--user", "alice", "--auth", "pap", "-v"], fleet,
            environment: ["CELLPATH_BEARER_PASSWORD": "env-s3cret"])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
        #expect(
            !fromEnvironment.stderr.contains("env-s3cret") && fromEnvironment.stderr.contains("AuthProtocol = 'pap'"))
        #expect(try Self.bearer(namespace, fleet, ["down"]).status == 0)
        let missing = try Self.bearer(namespace, fleet, ["up", "--password-file", "/nonexistent/password"])
        #expect(
            missing.status == 66
                && missing.stderr.hasPrefix("error: couldn't read the password file /nonexistent/password: "))
        try Self.expectNothingLeft(namespace, fleet)
    }

    @Test func severalModemsAndNoneNamedListsThemAndExits64() throws {
        let fleet = try SimulatedFleet([.test(.mbim, 1), .test(.qmi, 2)])
        let namespace = try DeviceNamespace()
        let up = try Self.bearer(namespace, fleet, ["up"])
        #expect(up.status == 64)
        #expect(up.stdout.hasPrefix("MODEM  PROTOCOL  PORT"))
        #expect(
            up.stderr
                == "error: 2 modems found: name one (index, IMEI, ICCID or control port)\nhint: the modems are listed above\n"
        )
        let second = try Self.bearer(namespace, fleet, ["up", "-m", "cdc-wdm1", "--json"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try JSONValue.parse(second.stdout)["interface"]?.string == "wwan1")
        #expect(try Self.bearer(namespace, fleet, ["down", "-m", "1"]).status == 0)
        #expect(try namespace.leftovers("wwan1") == [] && namespace.leftovers("wwan0") == [])
        #expect(eventually { fleet.device(1).allocatedQMIClientIDs == 0 })
    }
}
