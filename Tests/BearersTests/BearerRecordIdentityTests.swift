import Bearers
import CellpathCore
import ModemDiscovery
import Modems
import SystemSupport
import TestSupport
import Testing

/// A modem's bearer record and lock are named by its physical device, not its ports: the modem
/// before and after a re-enumeration (`cdc-wdm0`/`wwan0`, then `cdc-wdm3`/`wwan3`) has one
/// record and one lock, so two processes that name it by its old and its new port take turns;
/// a modem that re-enumerated under another device path finds its record by its IMEI.
@Suite(.ownThreads)
struct BearerRecordIdentityTests {
    static let usbDevice = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2"

    static func modem(number: Int, device: String = usbDevice) -> DiscoveredModem {
        DiscoveredModem(
            index: 0, devicePath: device,
            ports: [ControlPort(name: "cdc-wdm\(number)", devicePath: "/dev/cdc-wdm\(number)", protocol: .mbim)],
            interfaces: ["wwan\(number)"])
    }

    @Test func aRenamedModemHasTheSameRecordAndLock() {
        let records = BearerRecords(directory: "/run/cellpath")
        let before = Self.modem(number: 0), after = Self.modem(number: 3)
        #expect(records.path(for: before) == records.path(for: after))
        #expect(records.lockPath(for: before) == records.lockPath(for: after))
        let other = Self.modem(number: 0, device: "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-3")
        #expect(records.path(for: other) != records.path(for: before))
        #expect(records.lockPath(for: other) != records.lockPath(for: before))
    }

    @Test func processesNamingTheModemByItsOldAndNewPortsTakeTurns() async throws {
        let directory = try TemporaryDirectory.make("cellpath-identity")
        defer { FileSystem.removeTree(directory) }
        let records = BearerRecords(directory: directory + "/state")
        let held = try await ModemLock.acquire(Self.modem(number: 0), in: records, purpose: "bearer up", wait: .zero)
        await #expect(throws: CellpathError.self) {
            _ = try await ModemLock.acquire(Self.modem(number: 3), in: records, purpose: "bearer down", wait: .zero)
        }
        held.release()
        let next = try await ModemLock.acquire(Self.modem(number: 3), in: records, purpose: "bearer down", wait: .zero)
        next.release()
    }

    static let imei = "351234567890125"

    /// A record of the modem at `device`, connected by cellpath, with `imei`.
    static func record(device: String, imei: String?) -> BearerRecord {
        var record = BearerRecord(
            device: device, controlPort: "/dev/cdc-wdm0", protocol: "mbim", interface: "wwan0", apn: "internet",
            connectedByCellpath: true, handle: BearerHandle(sessionID: 0), since: 1)
        record.imei = imei
        return record
    }

    @Test func aModemThatReEnumeratedUnderAnotherDevicePathFindsItsRecordByItsIMEI() async throws {
        let directory = try TemporaryDirectory.make("cellpath-imei")
        defer { FileSystem.removeTree(directory) }
        let records = BearerRecords(directory: directory + "/state")
        let old = directory + "/devices/usb1/1-2"
        try FileSystem.makeDirectories(old)
        try records.save(Self.record(device: old, imei: Self.imei))
        let moved = Self.modem(number: 3, device: directory + "/devices/usb1/1-4")

        // While the old device exists, its record is not another modem's: the IMEI is not even read.
        var asked = 0
        #expect(
            try await records.load(for: moved) {
                asked += 1; return Self.imei
            } == nil)
        #expect(asked == 0)

        FileSystem.removeTree(old)
        #expect(try await records.load(for: moved) { "359876543210983" } == nil, "another IMEI")
        #expect(try await records.load(for: moved) { nil } == nil, "no IMEI read")
        let found = try #require(try await records.load(for: moved) { Self.imei })
        #expect(found.device == moved.devicePath && found.controlPort == "/dev/cdc-wdm3")
        #expect(found.connectedByCellpath && found.handle == BearerHandle(sessionID: 0) && found.imei == Self.imei)
        // Moved to the modem's own name: found by its path from now on, the old file gone.
        #expect(try records.load(for: moved) == found)
        #expect(!FileSystem.exists(records.path(device: old)))
    }

    @Test func aRecordWhoseIMEIIsNoIMEIIsRefused() throws {
        let directory = try TemporaryDirectory.make("cellpath-imei")
        defer { FileSystem.removeTree(directory) }
        let records = BearerRecords(directory: directory + "/state")
        let modem = Self.modem(number: 0, device: directory + "/devices/usb1/1-2")
        try records.save(Self.record(device: modem.devicePath, imei: "35123456789012x"))
        #expect(throws: CellpathError.self) { try records.load(for: modem) }
        #expect(
            BearerRecord.isIMEI(Self.imei) && BearerRecord.isIMEI("35123456789012")
                && !BearerRecord.isIMEI("3512345678901"))
    }
}
