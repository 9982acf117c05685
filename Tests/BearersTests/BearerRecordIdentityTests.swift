import Bearers
import CellpathCore
import ModemDiscovery
import SystemSupport
import TestSupport
import Testing

/// A modem's bearer record and lock are named by its physical device, not its ports: the modem
/// before and after a re-enumeration (`cdc-wdm0`/`wwan0`, then `cdc-wdm3`/`wwan3`) has one
/// record and one lock, so two processes that name it by its old and its new port take turns.
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
}
