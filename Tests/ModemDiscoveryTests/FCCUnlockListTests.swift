import Glibc
import ModemDiscovery
import SystemSupport
import TestSupport
import Testing

/// ModemManager's FCC-unlock list as cellpath reads it: a model's `vid:pid` entry, its vendor's
/// `vid` entry only when asked for, USB and PCI ids alike, and the remedy for each case.
@Suite struct FCCUnlockListTests {
    /// A list directory holding `entries` (empty files, as the shipped scripts and their links).
    private static func withList(_ entries: [String], _ body: (FCCUnlockList) throws -> Void) throws {
        let directory = try TemporaryDirectory.make("cellpath-fcc")
        defer { FileSystem.removeTree(directory) }
        for entry in entries { close(open("\(directory)/\(entry)", O_CREAT | O_WRONLY, 0o600)) }
        try body(FCCUnlockList(directory: directory))
    }

    private static let em7455 = DiscoveredModem(
        index: 2, devicePath: "/sys/devices/usb1/1-2", ports: [], interfaces: ["wwan0"], usbVendorID: "1199",
        usbProductID: "9079")
    private static let mc7455 = DiscoveredModem(
        index: 0, devicePath: "/sys/devices/usb1/1-3", ports: [], interfaces: ["wwan1"], usbVendorID: "1199",
        usbProductID: "9071")
    private static let fm350 = DiscoveredModem(
        index: 10, devicePath: "/sys/devices/pci0000:00/0000:01:00.0", ports: [], interfaces: ["wwan0"],
        pciVendorID: "14C3", pciDeviceID: "4D75")

    @Test func aModelsOwnEntryAndItsVendorsOnlyWhenAskedFor() throws {
        try Self.withList(["1199", "1199:9079", "14c3:4d75"]) { list in
            #expect(list.entry(for: Self.em7455) == "1199:9079")
            #expect(list.entry(for: Self.em7455, orVendor: false) == "1199:9079")
            #expect(list.entry(for: Self.mc7455) == "1199", "the vendor's script")
            #expect(list.entry(for: Self.mc7455, orVendor: false) == nil, "not a model of the list")
            #expect(list.entry(for: Self.fm350) == "14c3:4d75", "PCI ids, lower-case")
            #expect(FCCUnlockList.hardwareID(of: Self.fm350) == "14c3:4d75")
        }
        try Self.withList([]) { list in #expect(list.entry(for: Self.em7455) == nil) }
    }

    @Test func theRemedyLinksTheScriptOrSaysThereIsNone() throws {
        try Self.withList(["1199:9079"]) { list in
            let listed = list.remedy(entry: "1199:9079", hardwareID: "1199:9079", simulated: false)
            #expect(
                listed.hasPrefix("enable ModemManager's unlock script for it: sudo ln -s \(list.directory)/1199:9079 "))
            #expect(listed.contains("/etc/ModemManager/fcc-unlock.d/"))
            #expect(!listed.contains("cellpath sim"), "a real modem's remedy names no simulator command")
            let simulated = list.remedy(entry: "1199:9079", hardwareID: "1199:9079", simulated: true)
            #expect(simulated.hasPrefix(listed) && simulated.contains("cellpath sim modem unlock-fcc"))
            let unlisted = list.remedy(entry: nil, hardwareID: "8086:7560", simulated: false)
            #expect(unlisted.contains("ships no unlock script for 8086:7560"))
            #expect(!unlisted.contains("ln -s"))
        }
    }
}
