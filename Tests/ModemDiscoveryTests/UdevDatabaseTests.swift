import Glibc
import ModemDiscovery
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// `ID_MM_DEVICE_IGNORE` read from udev's database: the simulated fleet marks the USB device of a
/// modem with `modemManagerIgnore`; a mark on the port's character device counts too. No root.
@Suite(.serialized, .ownThreads) struct UdevDatabaseTests {
    @Test func theMarkOnTheUSBDeviceOrThePortsCharacterDevice() throws {
        let run = try TemporaryDirectory.make("cellpath-udev")
        defer { FileSystem.removeTree(run) }
        var ignored = SimulatedModem(protocol: .qmi)
        ignored.modemManagerIgnore = true
        let fleet = SimulatedModemFleet(
            scenario: Scenario(modems: [SimulatedModem(protocol: .mbim), ignored]),
            runDirectory: run, bearerNetwork: StaticBearerNetwork())
        try fleet.start()
        defer { fleet.stop() }

        let roots = DeviceRoots(sysfs: "\(run)/sys", dev: "\(run)/dev", udev: "\(run)/udev")
        let modems = ModemDiscovery(roots: roots).modems()
        try #require(modems.count == 2, "\(modems)")
        let udev = UdevDatabase(roots: roots)
        #expect(FileSystem.exists("\(run)/udev/data/+usb:1-2"))
        #expect(!udev.modemManagerIgnores(modems[0].ports[0]))
        #expect(udev.modemManagerIgnores(modems[1].ports[0]))
        // Elsewhere (the real /run/udev) the simulated modem carries no mark.
        #expect(
            !UdevDatabase(roots: DeviceRoots(sysfs: "\(run)/sys", dev: "\(run)/dev", udev: "\(run)/none"))
                .modemManagerIgnores(modems[1].ports[0]))

        // The port's character device: c<major>:<minor> of the node it opens.
        var info = stat()
        try #require(stat(modems[0].ports[0].devicePath, &info) == 0)
        let device = UInt64(info.st_rdev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        try FileSystem.write("S:cdc-wdm0\nE:ID_MM_DEVICE_IGNORE=0\n", to: "\(run)/udev/data/c\(major):\(minor)")
        #expect(!udev.modemManagerIgnores(modems[0].ports[0]), "0 does not ignore")
        try FileSystem.write("S:cdc-wdm0\nE:ID_MM_DEVICE_IGNORE=1\n", to: "\(run)/udev/data/c\(major):\(minor)")
        #expect(udev.modemManagerIgnores(modems[0].ports[0]))
    }
}
