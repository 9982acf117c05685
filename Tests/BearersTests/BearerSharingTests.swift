import CellpathCore
import Glibc
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// Two cellpath processes on one modem, and bearer records that are not cellpath's own: the
/// built binary in a namespace of the test's own against a simulated modem (as
/// `BearerCommandTests`). A forged, corrupt or foreign record is refused and never acted on;
/// concurrent commands take turns on the modem's lock; a bearer in use is not taken down under
/// its user; what a killed process left is cleaned up by the next command. Root.
@Suite(
    .serialized, .timeLimit(.minutes(10)), .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)),
    .ownThreads(.worlds))
struct BearerSharingTests {
    /// The record file of the one modem in `namespace`, once there is one.
    static func recordPath(_ namespace: DeviceNamespace) throws -> String {
        let names = try ProcessRunner.run(["ls", namespace.stateDirectory]).stdout.split(separator: "\n")
        let name = try #require(
            names.first { $0.hasPrefix("bearer-") && $0.hasSuffix(".json") }, "no record in \(names)")
        return "\(namespace.stateDirectory)/\(name)"
    }

    /// Brings the bearer up, then replaces its record by `change` of it (as a forger with write
    /// access to the file would); returns the fleet, namespace and record path.
    static func upWithForgedRecord(
        _ change: (inout JSONValue) -> Void
    ) throws -> (SimulatedFleet, DeviceNamespace, String) {
        let (fleet, namespace) = try BearerCommandTests.setUp(.mbim)
        let up = try BearerCommandTests.bearer(namespace, fleet, ["up"])
        #expect(up.status == 0, "\(up.stderr)")
        let path = try recordPath(namespace)
        var record = try JSONValue.parse(FileSystem.readText(path) ?? "")
        change(&record)
        try FileSystem.write(record.serialized, to: path, mode: 0o600)
        return (fleet, namespace, path)
    }

    /// A forged record is refused with 65, moved aside, and `bearer down` changes nothing.
    static func expectRefused(
        _ namespace: DeviceNamespace, _ fleet: SimulatedFleet, _ path: String, mentioning reason: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let down = try BearerCommandTests.bearer(namespace, fleet, ["down"])
        #expect(down.status == 65, "\(down.stderr)", sourceLocation: sourceLocation)
        #expect(
            down.stderr.contains("error: refusing the bearer record \(path): \(reason)"), "\(down.stderr)",
            sourceLocation: sourceLocation)
        #expect(
            down.stderr.contains("it was moved to \(path).refused"), "\(down.stderr)", sourceLocation: sourceLocation)
        #expect(FileSystem.exists("\(path).refused") && !FileSystem.exists(path), sourceLocation: sourceLocation)
        #expect(
            fleet.device(0).isBearerConnected, "a refused record must not take anything down",
            sourceLocation: sourceLocation)
    }

    /// The JSON document in a command's output (stdout and stderr together): from its first
    /// line that opens an object.
    static func document(in output: String) -> JSONValue? {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("{") }) else { return nil }
        return try? JSONValue.parse(lines[start...].joined(separator: "\n"))
    }

    // MARK: Records that are not cellpath's

    @Test func aRecordNamingAPathAsItsInterfaceWritesNothingThroughIt() throws {
        let target = "/tmp/cellpath-forged-\(getpid())"
        let link = "/tmp/x-\(getpid())"
        try FileSystem.write("untouched\n", to: target, mode: 0o644)
        #expect(symlink(target, link) == 0)
        defer { unlink(target); unlink(link) }
        let name = "../../../../../../tmp/x-\(getpid())"
        let (fleet, namespace, path) = try Self.upWithForgedRecord { record in
            record.set(["interface"], .string(name))
            record.set(["addressing", "addressing", "interface"], .string(name))
            record.set(["addressing", "previousRPFilter"], .string("written by root"))
        }
        try Self.expectRefused(namespace, fleet, path, mentioning: "its interface is not an interface name")
        #expect(FileSystem.readText(target) == "untouched\n")
    }

    @Test func aRecordNamingWiFiLeavesWiFiAlone() throws {
        let (fleet, namespace, path) = try Self.upWithForgedRecord { record in
            record.set(["interface"], .string("wlan0"))
            record.set(["addressing", "addressing", "interface"], .string("wlan0"))
            record.set(["addressing", "broughtUp"], .bool(true))
            record.set(["addressing", "previousMTU"], .int(1280))
        }
        let wifiBefore = try namespace.shell("ip link show wlan0; ip route show default")
        try Self.expectRefused(namespace, fleet, path, mentioning: "its interface wlan0 is not modem 0's")
        #expect(try namespace.shell("ip link show wlan0; ip route show default") == wifiBefore)
        #expect(try namespace.shell("ip route show default").contains("via 192.0.2.1 dev wlan0"))
    }

    /// `bearer down` writes a QMAP bearer's mux id to `qmi/del_mux`: only one the kernel takes.
    @Test func aRecordWithAQMAPMuxIDOutOfRangeIsRefused() throws {
        let (fleet, namespace, path) = try Self.upWithForgedRecord { record in
            record.set(["qmapMuxID"], .int(300))
        }
        try Self.expectRefused(namespace, fleet, path, mentioning: "its QMAP mux id is out of range")
    }

    /// What a check starts on without asking the modem (`RecordedBearer`) must be what a
    /// bring-up could have recorded: DNS servers that are addresses, an MCC-MNC, a backend's name.
    @Test(arguments: [
        ("dnsServers", JSONValue.array([.string("wlan0")]), "its DNS servers are not addresses"),
        ("servingNetwork", .string("001-01; rm"), "its serving network is not an MCC-MNC"),
        ("backend", .string("curl"), "its backend is not one of cellpath's")
    ])
    func aRecordWithAPathCellpathCouldNotHaveReadIsRefused(
        _ key: String, _ value: JSONValue, _ reason: String
    ) throws {
        let (fleet, namespace, path) = try Self.upWithForgedRecord { record in record.set([key], value) }
        try Self.expectRefused(namespace, fleet, path, mentioning: reason)
    }

    @Test func aRecordNamingAnotherProgramsTableLeavesItsRulesAndRoutes() throws {
        let (fleet, namespace, path) = try Self.upWithForgedRecord { record in
            record.set(["addressing", "table"], .int(100))
        }
        // A VPN's table and rule.
        _ = try namespace.shell(
            "ip route add default dev wlan0 table 100 && ip rule add from 100.64.23.10 lookup 100 priority 100")
        try Self.expectRefused(namespace, fleet, path, mentioning: "its routing table 100 is not one of cellpath's")
        #expect(try namespace.shell("ip rule").contains("100:\tfrom 100.64.23.10 lookup 100"))
        #expect(try namespace.shell("ip route show table 100").contains("default dev wlan0"))
    }

    @Test func recordsThatAreLinksCorruptOrNotPrivateAreRefused() throws {
        // A link to a file of the right shape.
        var (fleet, namespace, path) = try Self.upWithForgedRecord { _ in }
        let copy = "\(namespace.stateDirectory)/copy.json"
        #expect(rename(path, copy) == 0 && symlink(copy, path) == 0)
        try Self.expectRefused(namespace, fleet, path, mentioning: "it is a symbolic link")

        (fleet, namespace, path) = try Self.upWithForgedRecord { _ in }
        try FileSystem.write("{\"controlPort\": ", to: path, mode: 0o600)
        try Self.expectRefused(namespace, fleet, path, mentioning: "it is not a bearer record")

        (fleet, namespace, path) = try Self.upWithForgedRecord { _ in }
        #expect(chmod(path, 0o644) == 0)
        try Self.expectRefused(namespace, fleet, path, mentioning: "other users may read or write it (mode 644)")

        (fleet, namespace, path) = try Self.upWithForgedRecord { _ in }
        #expect(chown(path, 65534, 65534) == 0)
        try Self.expectRefused(namespace, fleet, path, mentioning: "it belongs to user 65534, not to 0")
    }

    // MARK: Records of earlier versions

    /// A record as earlier versions wrote it (named by the control port, without the modem's
    /// device) is read and moved to the modem's own name; `bearer down` then takes the bearer
    /// down and leaves nothing.
    @Test func aRecordOfAnEarlierVersionIsReadAndMoved() throws {
        let (fleet, namespace, path) = try Self.upWithForgedRecord { record in record.set(["device"], .null) }
        let port = try #require(try JSONValue.parse(FileSystem.readText(path) ?? "")["controlPort"]?.string)
        let legacy = "\(namespace.stateDirectory)/bearer-\(port.split(separator: "/").joined(separator: "-")).json"
        #expect(path != legacy)
        #expect(rename(path, legacy) == 0)
        let status = try BearerCommandTests.bearer(namespace, fleet, ["status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(FileSystem.exists(path) && !FileSystem.exists(legacy), "the record was not moved")
        let down = try BearerCommandTests.bearer(namespace, fleet, ["down"])
        #expect(down.status == 0, "\(down.stderr)")
        #expect(down.stderr.contains("bearer disconnected") || down.stdout.contains("disconnected"), "\(down.stderr)")
        try BearerCommandTests.expectNothingLeft(namespace, fleet)
        #expect(!FileSystem.exists(path) && !FileSystem.exists(legacy))
    }

    @Test func aRecordsDirectoryOthersMayWriteIsRefused() throws {
        let (fleet, namespace) = try BearerCommandTests.setUp(.mbim)
        #expect(chmod(namespace.stateDirectory, 0o777) == 0)
        let up = try BearerCommandTests.bearer(namespace, fleet, ["up"])
        #expect(up.status == 77, "\(up.stderr)")
        #expect(
            up.stderr.contains(
                "refusing the bearer records' directory \(namespace.stateDirectory): other users may write into it (mode 777)"
            ),
            "\(up.stderr)")
        #expect(!fleet.device(0).isBearerConnected)
    }

    /// Without a record (lost, refused), `down --force` removes what has cellpath's shape on the
    /// modem's interface and disconnects the bearer.
    @Test func downForceWithoutARecordRemovesCellpathsShape() throws {
        let (fleet, namespace, path) = try Self.upWithForgedRecord { record in
            record.set(["addressing", "table"], .int(100))
        }
        try Self.expectRefused(namespace, fleet, path, mentioning: "its routing table 100")
        #expect(try namespace.leftovers("wwan0").contains { $0.hasPrefix("address:") })
        let forced = try BearerCommandTests.bearer(namespace, fleet, ["down", "--force", "--json"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try JSONValue.parse(forced.stdout)["configuration_removed"]?.bool == true)
        #expect(eventually { !fleet.device(0).isBearerConnected })
        unlink("\(path).refused")
        let left = try namespace.leftovers("wwan0").filter { !$0.hasPrefix("wwan0 up") && !$0.hasPrefix("rp_filter") }
        #expect(left == [])
    }

    // MARK: Two processes on one modem

    /// Through the proxy (as ModemManager and every other client share a modem).
    @Test(arguments: BearerCommandTests.protocols)
    func twoBearerUpsAtOnceConnectOnceAndOneDownRemovesEverything(_ kind: SimulatorScenario.ModemProtocol) throws {
        var faults = ModemFaults()
        faults.responseDelayMs = 100
        let (fleet, namespace) = try BearerCommandTests.setUp(kind, faults: faults)
        let outputs = ["\(namespace.stateDirectory)-a", "\(namespace.stateDirectory)-b"]
        defer { outputs.forEach { unlink($0) } }
        let ups = try outputs.map { try namespace.start(["bearer", "up", "--json"], fleet, output: $0) }
        for up in ups { #expect(up.wait(timeoutMs: 60_000)) }
        let texts = outputs.map { FileSystem.readText($0) ?? "" }
        #expect(ups.map(\.exitStatus) == [0, 0], "\(texts)")
        // Each output: warnings on stderr first (the wait), then the JSON document.
        let reused = texts.map { Self.document(in: $0)?["reused"]?.bool.map(String.init) ?? "none" }
        #expect(Set(reused) == ["false", "true"], "one connects, the other reuses: \(texts)")
        let down = try namespace.cellpath(["bearer", "down"], fleet)
        #expect(down.status == 0, "\(down.stderr)")
        #expect(try namespace.leftovers("wwan0") == [])
        #expect(eventually { !fleet.device(0).isBearerConnected })
    }

    @Test func aBusyModemIsReportedWithItsHolderAnd75WithoutWaiting() throws {
        let (fleet, namespace) = try BearerCommandTests.setUp(.mbim)
        // Another cellpath process holds the modem's lock.
        let up = try BearerCommandTests.bearer(namespace, fleet, ["up"])
        #expect(up.status == 0, "\(up.stderr)")
        let lockPath = String(try Self.recordPath(namespace).dropLast(".json".count)) + ".lock"
        let holder = try FileDescriptor.open(lockPath, O_RDWR | O_CREAT, mode: 0o600)
        #expect(flock(holder.rawValue, LOCK_EX) == 0)
        try IO.writeAll(holder.rawValue, "cellpath process 4242 (bearer up)")
        let busy = try BearerCommandTests.bearer(namespace, fleet, ["down", "--wait", "0"])
        #expect(busy.status == 75, "\(busy.stderr)")
        #expect(
            busy.stderr.contains("error: the modem's bearer is busy: cellpath process 4242 (bearer up) is changing it"),
            "\(busy.stderr)")
        #expect(fleet.device(0).isBearerConnected)
        let waited = try BearerCommandTests.bearer(namespace, fleet, ["down", "--wait", "0.3"])
        #expect(
            waited.status == 75 && waited.stderr.contains("waiting for cellpath process 4242 (bearer up)"),
            "\(waited.stderr)")
        holder.close()
        let down = try BearerCommandTests.bearer(namespace, fleet, ["down", "--wait", "0"])
        #expect(down.status == 0, "\(down.stderr)")
        try BearerCommandTests.expectNothingLeft(namespace, fleet)
    }

    /// A bearer that a running check uses (a user in the record) is not taken down by `bearer
    /// down`, which hands it to that user; a user that ended without releasing it (a second
    /// Ctrl-C, a kill) is found by the next command, which says so and cleans up after it.
    @Test func aBearerInUseIsLeftToItsLastUserAndAnEndedUsersIsCleanedUp() throws {
        let (fleet, namespace, path) = try Self.upWithForgedRecord { _ in }
        let user = try Spawn.start(["sleep", "60"])
        defer { kill(user, SIGKILL); _ = Spawn.wait(user) }
        let startTime = try #require(ProcessIdentity.startTime(of: user))
        var record = try JSONValue.parse(FileSystem.readText(path) ?? "")
        record.set(["kept"], .bool(false))
        record.set(["users"], .array([.object([("pid", .int(Int(user))), ("startTime", .int(Int(startTime)))])]))
        try FileSystem.write(record.serialized, to: path, mode: 0o600)

        let down = try BearerCommandTests.bearer(namespace, fleet, ["down", "--json"])
        #expect(down.status == 0, "\(down.stderr)")
        let result = try JSONValue.parse(down.stdout)
        #expect(
            result["bearer"]?.string == "in-use" && result["used_by"]?.array?.compactMap(\.int) == [Int(user)],
            "\(down.stdout)")
        #expect(fleet.device(0).isBearerConnected && FileSystem.exists(path))

        // The user ends without releasing it: the next fetch reuses the bearer and, as its last
        // user, takes it down.
        kill(user, SIGKILL)
        _ = Spawn.wait(user)
        let fetch = try namespace.cellpath(
            ["fetch", "-m", "0", "--no-proxy", "--timeout", "1", "http://192.0.2.99/"], fleet)
        #expect(
            fetch.stderr.contains(
                "cellpath process \(user) ended without releasing modem 0's bearer: cleaning up after it"),
            "\(fetch.stderr)")
        try BearerCommandTests.expectNothingLeft(namespace, fleet, "\(fetch.stderr)")
    }
}

extension JSONValue {
    /// Sets the member at `path` (objects only), adding it when missing.
    mutating func set(_ path: [String], _ value: JSONValue) {
        guard let key = path.first, case .object(var members) = self else { return }
        let index = members.firstIndex { $0.0 == key }
        var member = index.map { members[$0].1 } ?? .object([])
        if path.count == 1 { member = value } else { member.set(Array(path.dropFirst()), value) }
        if let index { members[index].1 = member } else { members.append((key, member)) }
        self = .object(members)
    }
}
