/// What the kernel names and reports for a profile's modem: port and net device names, the USB
/// interface carrying the function, the PCI class. The simulator numbers every name by the
/// modem's index in the scenario (modem 3 has `cdc-wdm3` or `wwan3mbim0`, `wwan3` or
/// `mhi_hwip3`), where a kernel numbers each kind on its own (docs/simulator-modems.md).
extension DeviceProfile {
    /// One character device of a modem as its class names it.
    public struct Port: Sendable, Equatable {
        /// The device name (`cdc-wdm0`, `wwan0mbim0`, `wwan0at0`, `ttyUSB3`).
        public let name: String
        /// What it speaks: `MBIM`, `QMI`, `AT`, `XMMRPC` (a WWAN port's sysfs `type`).
        public let type: String
        /// Its class: `usbmisc` (cdc-wdm), `wwan` (WWAN ports), `tty` (a USB serial AT port).
        public let subsystem: String
    }

    /// The MBIM or QMI control port of modem `index`; nil when the device has none.
    public func controlDevice(index: Int) -> Port? {
        guard let proto = controlProtocol else { return nil }
        let type = proto.rawValue.uppercased()
        switch controlPort {
        case .cdcWDM: return Port(name: "cdc-wdm\(index)", type: type, subsystem: "usbmisc")
        case .wwanPort: return Port(name: "wwan\(index)\(proto.rawValue)0", type: type, subsystem: "wwan")
        case .none: return nil
        }
    }

    /// The ports beside the control port, in `extraPorts` order: WWAN ports (`wwanNat0`,
    /// `wwanNxmmrpc0`) on PCIe, the USB serial AT port `ttyUSBN` on USB.
    public func extraPortList(index: Int) -> [Port] {
        extraPorts.map {
            bus == .usb
                ? Port(name: "ttyUSB\(index)", type: $0, subsystem: "tty")
                : Port(name: "wwan\(index)\($0.lowercased())0", type: $0, subsystem: "wwan")
        }
    }

    /// Every character device of modem `index`, control port first. The idealised MBIM modem
    /// also has its control port under its WWAN name `wwanNmbim0` (as it always had).
    public func ports(index: Int) -> [Port] {
        var ports = controlDevice(index: index).map { [$0] } ?? []
        if name == .simulated, controlProtocol == .mbim {
            ports.append(Port(name: "wwan\(index)mbim0", type: "MBIM", subsystem: "wwan"))
        }
        return ports + extraPortList(index: index)
    }

    /// The data net device of modem `index`: `wwanN` (cdc_mbim, qmi_wwan, the WWAN default
    /// link), `mhi_hwipN` (mhi_net), `usbN` (cdc_ether); nil without one (L850).
    public func netDeviceName(index: Int) -> String? {
        switch netDevice {
        case .usbWWAN, .wwanDefaultLink: "wwan\(index)"
        case .mhiNet: "mhi_hwip\(index)"
        case .usbEthernet: "usb\(index)"
        case .none: nil
        }
    }

    /// The USB interface of a USB modem's AT port (bound to `option`): Quectel's primary AT
    /// port is interface 2 (ModemManager's 77-mm-quectel-port-types.rules).
    public var usbATInterfaceNumber: Int { 2 }

    /// The PCI class code (`class` attribute): Qualcomm MHI modules report 0xff0000
    /// (unassigned), MediaTek and Intel modules 0x0d4000 (wireless controller).
    public var pciClass: String { driver == "mhi-pci-generic" ? "0xff0000" : "0x0d4000" }

    /// USB interface class, subclass and protocol of the bound function.
    public var usbInterfaceClass: (class: UInt8, subclass: UInt8, protocol: UInt8) {
        switch driver {
        case "cdc_mbim": (0x02, 0x0e, 0x00)
        case "cdc_ether": (0x02, 0x06, 0x00)
        default: (0xff, 0xff, 0xff)
        }
    }
}
