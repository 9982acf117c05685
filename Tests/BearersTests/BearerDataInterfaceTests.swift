import CellpathCore
import Glibc
import ModemDiscovery
import Modems
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

@testable import Bearers

/// The net device ModemManager names for its bearer's data, over a simulated QMI modem's sysfs
/// tree with links added by hand as the kernel adds them once ModemManager multiplexes: taken
/// when it is the modem's or stacked on it (read again, since it came after discovery),
/// refused otherwise; a bearer record naming such a link is accepted for ModemManager's bearer
/// only. No root.
@Suite(.serialized, .ownThreads)
struct BearerDataInterfaceTests {
    /// A simulated QMI modem's tree, the modem as discovery saw it before any link was added.
    final class World {
        let run: String
        let fleet: SimulatedModemFleet
        let roots: DeviceRoots
        let modem: DiscoveredModem

        init() throws {
            run = try TemporaryDirectory.make("cellpath-data-interface")
            fleet = SimulatedModemFleet(
                scenario: Scenario(modems: [SimulatedModem(protocol: .qmi)]), runDirectory: run,
                bearerNetwork: StaticBearerNetwork())
            try fleet.start()
            roots = DeviceRoots(sysfs: "\(run)/sys", dev: "\(run)/dev")
            let modems = ModemDiscovery(roots: roots).modems()
            try #require(modems.count == 1 && modems[0].interfaces.count == 1, "\(modems)")
            modem = modems[0]
        }

        deinit {
            fleet.stop()
            FileSystem.removeTree(run)
        }

        var master: String { modem.interfaces[0] }

        /// A virtual net device `name`, stacked on the master (`lower_<master>` on it, and
        /// `upper_<name>` on the master when `upperOnMaster`), or on nothing.
        func addLink(_ name: String, stacked: Bool = true, upperOnMaster: Bool = true) throws {
            let sysfs = roots.sysfs
            let path = "\(sysfs)/devices/virtual/net/\(name)"
            try FileSystem.makeDirectories(path)
            try FileSystem.write("65534\n", to: "\(path)/type", mode: 0o644)
            #expect(symlink("../../devices/virtual/net/\(name)", "\(sysfs)/class/net/\(name)") == 0)
            guard stacked else { return }
            let resolved = try #require(realpath("\(sysfs)/class/net/\(master)", nil))
            defer { free(resolved) }
            let masterPath = String(cString: resolved)
            #expect(symlink(masterPath, "\(path)/lower_\(master)") == 0)
            if upperOnMaster { #expect(symlink(path, "\(masterPath)/upper_\(name)") == 0) }
        }

        /// A record of ModemManager's bearer carrying data on `interface`.
        func record(interface: String, backend: String?, dataInterface: String? = nil) -> BearerRecord {
            var record = BearerRecord(
                device: modem.devicePath, controlPort: modem.ports[0].devicePath, protocol: "qmi",
                interface: interface, apn: "internet", connectedByCellpath: true,
                handle: BearerHandle(
                    bearerPath: "/org/freedesktop/ModemManager1/Bearer/3", dataInterface: dataInterface ?? interface),
                since: 1)
            record.backend = backend
            return record
        }
    }

    @Test func theMasterIsTakenAsItIs() throws {
        let world = try World()
        #expect(try BearerInterface.named(world.master, of: world.modem, roots: world.roots) == world.master)
    }

    /// `qmimux0` with its `lower_*` link and the master's `upper_*`; `rmnet_data0` with the
    /// `lower_*` link only; `mbimmux0.1` with the master's `upper_*` only: all made after discovery.
    @Test func aLinkStackedOnTheMasterAfterDiscoveryIsTaken() throws {
        let world = try World()
        try world.addLink("qmimux0")
        try world.addLink("rmnet_data0", upperOnMaster: false)
        let upperOnly = "mbimmux0.1"
        try world.addLink(upperOnly, upperOnMaster: true)
        #expect(unlink("\(world.roots.sysfs)/devices/virtual/net/\(upperOnly)/lower_\(world.master)") == 0)
        #expect(world.modem.links.isEmpty, "discovered before the links")
        for name in ["qmimux0", "rmnet_data0", upperOnly] {
            #expect(try BearerInterface.named(name, of: world.modem, roots: world.roots) == name)
        }
    }

    @Test(arguments: ["dummy0", "wlan0", "../../../tmp/x", ""])
    func aDeviceThatIsNotTheModemsIsRefused(_ name: String) throws {
        let world = try World()
        try world.addLink("qmimux0")
        try world.addLink("dummy0", stacked: false)
        let error = try #require(throws: CellpathError.self) {
            try BearerInterface.named(name, of: world.modem, roots: world.roots)
        }
        #expect(error.kind == .unavailable)
        #expect(error.message.contains(name.debugDescription), "\(error.message)")
        #expect(error.message.contains("(\(world.master), qmimux0)"), "\(error.message)")
    }

    /// The record of ModemManager's bearer on its link is one cellpath could have written for
    /// the modem discovered again (the link with it); the same link without ModemManager or a
    /// QMAP mux id, or a handle naming no interface, is not.
    @Test func aRecordOfModemManagersBearerOnItsLinkIsAccepted() throws {
        let world = try World()
        try world.addLink("qmimux0")
        let modem = try #require(ModemDiscovery(roots: world.roots).current(world.modem))
        #expect(modem.links == ["qmimux0"])

        #expect(world.record(interface: "qmimux0", backend: "modemmanager").problem(for: modem) == nil)
        #expect(
            world.record(interface: "qmimux0", backend: nil).problem(for: modem)
                == "its interface qmimux0 is not modem 0's")
        #expect(
            world.record(interface: "qmimux0", backend: "modemmanager").problem(for: world.modem)
                == "its interface qmimux0 is not modem 0's", "not a link of the modem as it was")
        #expect(
            world.record(interface: world.master, backend: "modemmanager", dataInterface: "../x").problem(for: modem)
                == "its ModemManager bearer's interface is not an interface name")
    }
}
