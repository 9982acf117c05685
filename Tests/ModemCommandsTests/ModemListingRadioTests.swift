import CellpathCore
import Glibc
import ModemDiscovery
import SystemSupport
import Testing

@testable import ModemCommands

/// The radio column of `cellpath modems`: `fcc-locked` only when the modem itself says its radio
/// is off and its model is on ModemManager's FCC-unlock list.
@Suite struct ModemListingRadioTests {
    private static let em7455 = DiscoveredModem(
        index: 0, devicePath: "/sys/devices/usb1/1-1",
        ports: [ControlPort(name: "cdc-wdm0", devicePath: "/dev/cdc-wdm0", protocol: .mbim)], interfaces: ["wwan0"],
        usbVendorID: "1199", usbProductID: "9079")

    private func report(_ radio: RadioState, backend: ModemBackendName, modem: DiscoveredModem = em7455) -> ModemReport
    {
        var status = ModemStatus(radio: radio)
        status.backend = backend
        return ModemReport(modem: modem, result: .success(status))
    }

    private func withList(_ body: (FCCUnlockList) throws -> Void) throws {
        var template = Array("/tmp/cellpath-fcc-list.XXXXXX".utf8CString)
        let directory = try #require(mkdtemp(&template).map { String(cString: $0) })
        defer { FileSystem.removeTree(directory) }
        try FileSystem.write("#!/bin/sh\n", to: "\(directory)/1199:9079")
        try body(FCCUnlockList(directory: directory))
    }

    @Test func aListedModemWhoseRadioIsOffIsFCCLocked() throws {
        try withList { list in
            #expect(ModemListing.radio(report(.off, backend: .mbim), list: list) == "fcc-locked")
            #expect(ModemListing.radio(report(.on, backend: .mbim), list: list) == "on")
        }
    }

    /// ModemManager leaves a modem disabled until something enables it: its radio reads off.
    @Test func throughModemManagerADisabledModemIsOffNotLocked() throws {
        try withList { list in
            #expect(ModemListing.radio(report(.off, backend: .modemManager), list: list) == "off")
        }
    }

    @Test func anUnlistedModemWhoseRadioIsOffIsOff() throws {
        try withList { list in
            var other = Self.em7455
            other.usbProductID = "9091"
            #expect(ModemListing.radio(report(.off, backend: .mbim, modem: other), list: list) == "off")
        }
    }
}
