import Glibc
import TestSupport
import Testing

/// udev/77-cellpath.rules gives the `cellpath` group the control ports of modems only: the
/// ports discovery reads (cdc-wdm on cdc_mbim or qmi_wwan, WWAN MBIM/QMI ports), not every
/// cdc-wdm device.
@Suite struct UdevRulesTests {
    /// A device as udev's match keys see it: its own subsystem and kernel name, and the drivers
    /// of it and its parents (`DRIVERS` searches the whole chain).
    struct Device {
        var subsystem: String
        var kernel: String
        var drivers: [String]
    }

    /// One `KEY=="value"` (or `!=`) of a rule line; assignments are not matches.
    struct Match {
        var key: String
        var negated: Bool
        var patterns: [String]

        /// udev's matching: shell glob patterns, alternatives separated by `|`.
        func matches(_ device: Device) -> Bool {
            let values: [String] =
                switch key {
                case "SUBSYSTEM": [device.subsystem]
                case "KERNEL": [device.kernel]
                case "DRIVERS": device.drivers
                default: []
                }
            let found = values.contains { value in patterns.contains { fnmatch($0, value, 0) == 0 } }
            return found != negated
        }
    }

    /// The rule lines that set a group, as their matches.
    static func groupRules() throws -> [[Match]] {
        let text = try #require(Repository.read("udev/77-cellpath.rules"))
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") && $0.contains("GROUP=") }.map { line in
            line.split(separator: ",").compactMap { part -> Match? in
                let item = String(part.drop { $0 == " " })
                let negated = item.contains("!=")
                guard let range = item.firstRange(of: negated ? "!=" : "==") else { return nil }
                let value = item[range.upperBound...].filter { $0 != "\"" }
                return Match(
                    key: String(item[..<range.lowerBound]), negated: negated,
                    patterns: value.split(separator: "|").map(String.init))
            }
        }
    }

    static func groupGiven(to device: Device) throws -> Bool {
        try groupRules().contains { rule in rule.allSatisfy { $0.matches(device) } }
    }

    @Test(arguments: ["cdc_mbim", "qmi_wwan"])
    func modemControlPortsGetTheGroup(driver: String) throws {
        #expect(try Self.groupGiven(to: Device(subsystem: "usbmisc", kernel: "cdc-wdm0", drivers: ["", driver, "usb"])))
    }

    @Test func wwanSubsystemPortsGetTheGroup() throws {
        #expect(
            try Self.groupGiven(to: Device(subsystem: "wwan", kernel: "wwan0mbim0", drivers: ["", "mhi_wwan_ctrl"])))
        #expect(try Self.groupGiven(to: Device(subsystem: "wwan", kernel: "wwan0qmi0", drivers: ["", "mhi_wwan_ctrl"])))
        #expect(try !Self.groupGiven(to: Device(subsystem: "wwan", kernel: "wwan0at0", drivers: ["", "mhi_wwan_ctrl"])))
    }

    @Test(arguments: ["cdc_wdm", "huawei_cdc_ncm", "cdc_ncm"])
    func otherCdcWdmDevicesDoNot(driver: String) throws {
        #expect(
            try !Self.groupGiven(to: Device(subsystem: "usbmisc", kernel: "cdc-wdm0", drivers: ["", driver, "usb"])))
    }
}
