import CellpathCore
import Glibc
import ModemDiscovery
import SystemSupport

extension DoctorCapture {
    /// The shape of a modem as sysfs and its report show it: bus, ids, driver, ports, net
    /// device and the links stacked on it, the kernel's QMI raw-ip setting, an FCC lock (radio
    /// off when captured), the SIM slots, and what the firmware negotiated or refuses (MBIMEx
    /// version through mbim-proxy, WDA data format, DMS UIM). What cellpath does not read (IPv6
    /// link-local only, QMAP support before a bearer used it, an MBIM PCIe module's
    /// manufacturer) stays nil: not read.
    func shape(_ report: ModemReport) -> DeviceShape {
        let modem = report.modem
        let device = modem.devicePath
        var shape = DeviceShape()
        // The firmware's manufacturer: QMI's DMS answers it, MBIM has none (a USB device's string
        // descriptor stands in; a PCI function has none: not read).
        shape.manufacturer =
            modem.ports.first?.protocol == .qmi ? report.status?.manufacturer : Self.attribute(device, "manufacturer")
        shape.model = report.status?.model ?? modem.model
        let control = modem.ports.first
        shape.protocol = control?.protocol.rawValue
        shape.controlPort =
            control.map { $0.name.hasPrefix("cdc-wdm") ? .cdcWDM : .wwan } ?? DeviceShape.ControlPort.none
        let net = modem.interfaces.first.flatMap { FileSystem.realPath("\(roots.sysfs)/class/net/\($0)") }
        // The function the driver binds: the control port's parent, else the net device's.
        let controlNode = control.flatMap { port in
            ["usbmisc", "wwan"].lazy.compactMap { FileSystem.realPath("\(roots.sysfs)/class/\($0)/\(port.name)") }.first
        }
        var function = net.flatMap { FileSystem.realPath($0 + "/device") }
        if let node = controlNode, node.contains("/usbmisc/") { function = FileSystem.realPath(node + "/device") }
        if let vendor = Self.attribute(device, "idVendor") {
            shape.bus = "usb"
            shape.vendorID = vendor.lowercased()
            shape.productID = Self.attribute(device, "idProduct")?.lowercased()
            shape.driver = function.flatMap { driverName($0) }
            shape.usbInterfaceNumber = function.flatMap { Self.attribute($0, "bInterfaceNumber") }.flatMap {
                Int($0, radix: 16)
            }
        } else if Self.attribute(device, "vendor") != nil {
            shape.bus = "pcie"
            shape.vendorID = Self.pciID(device, "vendor")
            shape.productID = Self.pciID(device, "device")
            shape.subsystemVendorID = Self.pciID(device, "subsystem_vendor")
            shape.subsystemDeviceID = Self.pciID(device, "subsystem_device")
            shape.driver = driverName(device)
        }
        shape.extraPorts = extraPortTypes(device, control: control?.name)
        if let net, let name = modem.interfaces.first {
            shape.netDevice =
                if net.contains("/wwan/") {
                    .wwanDefaultLink
                } else if name.hasPrefix("mhi_hwip") || net.contains("/mhi") {
                    .mhiNet
                } else if shape.driver == "cdc_ether" {
                    .usbEthernet
                } else {
                    .usbWWAN
                }
            if let rawIP = Self.attribute(net, "qmi/raw_ip") { shape.qmiKernelRawIP = rawIP == "Y" }
        } else {
            shape.netDevice = DeviceShape.NetDevice.none
        }
        shape.fccLocked = report.status?.radio.map { $0 == .off }
        let traits = report.status?.firmwareTraits
        shape.mbimExtensions = traits?.mbimExtensions
        shape.qmiFirmwareRawIP = traits?.qmiRawIP
        shape.qmiDMSUIMRefused = traits?.qmiDMSUIMRefused
        shape.qmiDataAggregation = traits?.qmiDataAggregation
        if net != nil { shape.muxLinks = modem.links.count }
        // QMAP is known to work once aggregation is on, or a QMAP mux device exists.
        if traits?.qmiDataAggregation == true || modem.protocol == .qmi && !modem.links.isEmpty { shape.qmiQMAP = true }
        if let slots = report.status?.sim?.slots {
            shape.simSlots = slots
            shape.slots = max(1, slots.count)
        }
        return shape
    }

    /// The types of the modem's ports beside its control port: WWAN ports (`AT`, `XMMRPC`), and
    /// `AT` for each USB serial port (`ttyUSBN`) of its USB device.
    private func extraPortTypes(_ device: String, control: String?) -> [String] {
        var types: [String] = []
        for name in (FileSystem.entries("\(roots.sysfs)/class/wwan") ?? []).sorted() where name != control {
            guard let path = FileSystem.realPath("\(roots.sysfs)/class/wwan/\(name)"), path.hasPrefix(device + "/"),
                let type = Self.attribute(path, "type"), type != "MBIM", type != "QMI"
            else { continue }
            types.append(type)
        }
        for name in (FileSystem.entries("\(roots.sysfs)/class/tty") ?? []).sorted() where name.hasPrefix("ttyUSB") {
            guard let path = FileSystem.realPath("\(roots.sysfs)/class/tty/\(name)"), path.hasPrefix(device + "/")
            else {
                continue
            }
            types.append("AT")
        }
        return types
    }

    private func driverName(_ path: String) -> String? {
        FileSystem.realPath(path + "/driver").map { String($0.split(separator: "/").last ?? "") }
    }

    private static func attribute(_ path: String, _ name: String) -> String? {
        FileSystem.readText("\(path)/\(name)").map {
            String($0.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        }
    }

    /// A PCI id attribute (`0x1eac`) as 4 lower-case hex digits.
    private static func pciID(_ path: String, _ name: String) -> String? {
        attribute(path, name).map { $0.lowercased().hasPrefix("0x") ? String($0.dropFirst(2)).lowercased() : $0 }
    }
}
