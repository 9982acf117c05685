import CellpathCore
import Glibc
import TestSupport
import Testing

/// Least privilege (docs/operations.md, Privileges): each command that needs privilege run as an
/// unprivileged user on the world's device with exactly what the table says it needs works,
/// and with one thing less (a capability, the port's group, its own record directory, root)
/// fails with exit 77, naming what is missing and how to grant it, before it changes anything
/// (no address, route, rule, rp_filter, record or bearer).
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct PrivilegeEndToEndTests {
    /// The group that stands in for the `cellpath` group of the udev rules: the port's group.
    private static let portGroup = "61234"

    /// What an unprivileged user is given: the port's group, CAP_NET_ADMIN (inheritable and
    /// ambient, as systemd's `AmbientCapabilities=` gives it), neither or both.
    private struct Grant {
        var portGroup: Bool
        var netAdmin: Bool
    }

    /// A world whose modem's control port belongs to `portGroup` (mode 0660, as the udev rules
    /// make it) and a record directory of nobody's own; `body` runs cellpath as nobody with a grant.
    private static func withWorld(
        _ body: (SimulatedDevice, _ nobody: (Grant, [String]) throws -> ProcessResult, _ records: String) throws -> Void
    ) throws {
        try SimulatedDevice.with(connect: false) { device in
            // Nothing of root's opens the port (root's mbim-proxy would take the answers of a
            // user's direct session): its path is the world's, the modem's state the simulator's.
            let port = try #require(try device.environment()["CELLPATH_DEV_ROOT"]) + "/cdc-wdm0"
            #expect(try device.run(["chgrp", portGroup, port]).status == 0)
            #expect(try device.run(["chmod", "0660", port]).status == 0)
            let records = "/tmp/\(device.prefix)privilege-records"
            defer { _ = try? WorldFixture.output(["rm", "-rf", records]) }
            _ = try WorldFixture.output(["install", "-d", "-m", "0700", "-o", "65534", "-g", "65534", records])
            try body(
                device,
                { grant, arguments in
                    let capabilities = grant.netAdmin ? ["--inh-caps=+net_admin", "--ambient-caps=+net_admin"] : []
                    return try device.run(
                        ["setpriv", "--reuid=65534", "--regid=65534"]
                            + [grant.portGroup ? "--groups=\(portGroup)" : "--clear-groups"] + capabilities
                            + ["env", "CELLPATH_STATE_DIR=\(records)", "HOME=/tmp", CellpathBinary.path] + arguments)
                },
                records)
        }
    }

    /// What a command may change on the device: wwan0's state and addresses (not its qdisc,
    /// which the kernel attaches the first time the link is up), the rules, every table's
    /// routes, wwan0's rp_filter, the records of nobody and of root, and the modem's bearer.
    private static func state(_ device: SimulatedDevice, _ records: String) throws -> [String] {
        let rootRecords = try #require(try device.environment()["CELLPATH_STATE_DIR"])
        return [
            try device.run(["ip", "-brief", "addr", "show", "dev", "wwan0"]).stdout,
            try device.run(["ip", "rule"]).stdout,
            try device.run(["ip", "route", "show", "table", "all"]).stdout,
            try device.run(["cat", "/proc/sys/net/ipv4/conf/wwan0/rp_filter"]).stdout,
            try WorldFixture.output(["ls", "-A", records, rootRecords]).stdout,
            "bearer: \(try device.status()["modems"]?.array?[0]["bearer"]?.string ?? "unreadable")"
        ]
    }

    @Test func bearerUpAndDownWorkWithCAPNETADMINAndThePortsGroupAndFailWithoutEitherChangingNothing() throws {
        try Self.withWorld { device, nobody, records in
            let before = try Self.state(device, records)
            #expect(before.last == "bearer: disconnected", "\(before)")

            // One capability less: nothing touched, 77 with the grant.
            let noCapability = try nobody(Grant(portGroup: true, netAdmin: false), ["bearer", "up", "-m", "0"])
            #expect(noCapability.status == 77, "\(noCapability.stderr)")
            #expect(
                noCapability.stderr.hasPrefix(
                    "error: cellpath bearer up needs CAP_NET_ADMIN, which this process does not have\n"),
                "\(noCapability.stderr)")
            #expect(noCapability.stderr.contains("AmbientCapabilities=CAP_NET_ADMIN"), "\(noCapability.stderr)")
            #expect(noCapability.stderr.contains("sudo setcap cap_net_admin+ep "), "\(noCapability.stderr)")
            #expect(try Self.state(device, records) == before)

            // fetch -m with the port's group alone cannot bring the bearer up: 77, nothing touched.
            let fetchDown = try nobody(
                Grant(portGroup: true, netAdmin: false), ["fetch", "-m", "0", "http://mno.carrier.test/final"])
            #expect(fetchDown.status == 77, "\(fetchDown.stderr)")
            #expect(fetchDown.stderr.contains("needs CAP_NET_ADMIN"), "\(fetchDown.stderr)")
            #expect(fetchDown.stderr.contains("AmbientCapabilities=CAP_NET_ADMIN"), "\(fetchDown.stderr)")
            #expect(try Self.state(device, records) == before)

            // No access to the control port: nothing touched, 77 naming the port.
            let noPort = try nobody(Grant(portGroup: false, netAdmin: true), ["bearer", "up", "-m", "0"])
            #expect(noPort.status == 77, "\(noPort.stderr)")
            #expect(noPort.stderr.contains("cdc-wdm0: permission denied"), "\(noPort.stderr)")
            #expect(noPort.stderr.contains("SupplementaryGroups=cellpath"), "\(noPort.stderr)")
            #expect(try Self.state(device, records) == before)

            // A record directory that is not nobody's: 77, nothing touched.
            _ = try WorldFixture.output(["chown", "0:0", records])
            let noRecords = try nobody(Grant(portGroup: true, netAdmin: true), ["bearer", "up", "-m", "0"])
            #expect(noRecords.status == 77, "\(noRecords.stderr)")
            #expect(noRecords.stderr.contains("refusing the bearer records' directory"), "\(noRecords.stderr)")
            #expect(try Self.state(device, records) == before)
            _ = try WorldFixture.output(["chown", "65534:65534", records])

            // Exactly what the table says: up, configured and recorded as nobody's.
            let up = try nobody(Grant(portGroup: true, netAdmin: true), ["bearer", "up", "-m", "0", "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            #expect(
                try JSONValue.parse(up.stdout)["ipv4_address"]?.string?.hasPrefix("100.64.") == true, "\(up.stdout)")
            let connected = try Self.state(device, records)
            #expect(connected[0].contains(" 100.64."), "\(connected[0])")
            #expect(connected[4].contains("bearer-"), "nobody's record: \(connected[4])")
            #expect(connected.last == "bearer: connected")

            // On a bearer that is up, fetch -m needs the port's group only, and changes nothing.
            let fetch = try nobody(
                Grant(portGroup: true, netAdmin: false), ["fetch", "-m", "0", "--json", "http://mno.carrier.test/final"]
            )
            #expect(
                try JSONValue.parse(fetch.stdout).hops.first?["status"]?.int == 404,
                "the carrier answered over the bearer: \(fetch.stdout) \(fetch.stderr)")
            #expect(try Self.state(device, records) == connected)

            // bearer down one capability short, then without the port: both 77, the bearer stays.
            let downNoCapability = try nobody(Grant(portGroup: true, netAdmin: false), ["bearer", "down", "-m", "0"])
            #expect(downNoCapability.status == 77, "\(downNoCapability.stderr)")
            #expect(downNoCapability.stderr.contains("cellpath bearer down needs CAP_NET_ADMIN"))
            let downNoPort = try nobody(Grant(portGroup: false, netAdmin: true), ["bearer", "down", "-m", "0"])
            #expect(downNoPort.status == 77, "\(downNoPort.stderr)")
            #expect(try Self.state(device, records) == connected)

            let down = try nobody(Grant(portGroup: true, netAdmin: true), ["bearer", "down", "-m", "0"])
            #expect(down.status == 0, "\(down.stderr)")
            let after = try Self.state(device, records)
            #expect(after == before, "\(zip(before, after).filter { $0 != $1 })")
        }
    }

    /// `modems show` and `bearer status` need the port's group only; `sim` needs root, which
    /// no capability replaces.
    @Test func readingAModemNeedsThePortsGroupAndTheSimulatorNeedsRoot() throws {
        try Self.withWorld { device, nobody, records in
            let before = try Self.state(device, records)
            for command in [["modems", "show", "0"], ["bearer", "status", "-m", "0"]] {
                let granted = try nobody(Grant(portGroup: true, netAdmin: false), command)
                #expect(granted.status == 0, "\(command): \(granted.stderr)")
                let refused = try nobody(Grant(portGroup: false, netAdmin: false), command)
                #expect(refused.status == 77, "\(command): \(refused.stderr)")
                #expect(refused.stderr.contains("permission denied"), "\(command): \(refused.stderr)")
            }
            let sim = try nobody(
                Grant(portGroup: true, netAdmin: true), ["sim", "bearer", "connect", "--prefix", device.prefix])
            #expect(sim.status == 77, "\(sim.stderr)")
            #expect(
                sim.stderr.hasPrefix(
                    "error: cellpath sim bearer connect needs root (network namespaces and TUN devices)"),
                "\(sim.stderr)")
            #expect(try Self.state(device, records) == before)
        }
    }
}
