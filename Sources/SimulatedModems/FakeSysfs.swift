import Glibc
import SimulatorScenario
import SystemSupport

/// The sysfs entries the kernel would create for one simulated modem, under `<run dir>/sys`:
/// a USB device with one interface bound to `cdc_mbim` or `qmi_wwan`, its control port
/// `usbmisc/cdc-wdmN` and its network interface `net/<iface>`; MBIM modems also get a WWAN-class
/// port `wwan/wwanNmbim0` (type "MBIM") as PCIe modems have. Every device has its `subsystem` link,
/// the USB device its `descriptors`, and a `qmi_wwan` interface its writable `qmi/raw_ip` and
/// `qmi/pass_through`, as ModemManager reads them.
struct FakeSysfs {
    let root: String
    let index: Int
    let modem: SimulatedModem
    let controlPort: String
    let interfaceName: String
    /// The number in the port names (`cdc-wdmN`): the modem's index until a reset renumbers it.
    let portNumber: Int

    var usbDevice: String { "devices/cellpath-sim/usb1/1-\(index + 1)" }
    var usbInterface: String { "\(usbDevice)/1-\(index + 1):1.0" }
    var driver: String { modem.protocol == .mbim ? "cdc_mbim" : "qmi_wwan" }
    var wwanPort: String? { modem.protocol == .mbim ? "wwan\(portNumber)mbim0" : nil }

    /// Creates the tree (idempotent).
    func create() throws(ModemDeviceError) {
        let (vendor, product) = modem.protocol == .mbim ? ("1199", "9079") : ("1199", "68c0")
        try write("\(usbDevice)/idVendor", vendor)
        try writeBytes("\(usbDevice)/descriptors", descriptors(product: UInt16(product, radix: 16) ?? 0))
        try link("\(usbDevice)/subsystem", to: up(usbDevice) + "bus/usb")
        try link("\(usbInterface)/subsystem", to: up(usbInterface) + "bus/usb")
        try write("\(usbDevice)/idProduct", product)
        try write("\(usbDevice)/manufacturer", modem.manufacturer)
        try write("\(usbDevice)/product", modem.model)
        try write("\(usbInterface)/bInterfaceNumber", "00")
        try write("\(usbInterface)/bInterfaceClass", modem.protocol == .mbim ? "02" : "ff")
        try write("\(usbInterface)/bInterfaceSubClass", modem.protocol == .mbim ? "0e" : "ff")
        try write("\(usbInterface)/bInterfaceProtocol", modem.protocol == .mbim ? "00" : "ff")
        try makeDirectory("bus/usb/drivers/\(driver)")
        try link("\(usbInterface)/driver", to: "../../../../../bus/usb/drivers/\(driver)")
        try write("\(usbInterface)/net/\(interfaceName)/uevent", "INTERFACE=\(interfaceName)")
        try write("\(usbInterface)/net/\(interfaceName)/type", "65534")
        try link("\(usbInterface)/net/\(interfaceName)/device", to: "../..")
        try link("\(usbInterface)/net/\(interfaceName)/subsystem", to: up("\(usbInterface)/net/\(interfaceName)") + "class/net")
        if modem.protocol == .qmi {
            try write("\(usbInterface)/net/\(interfaceName)/qmi/raw_ip", "Y")
            try write("\(usbInterface)/net/\(interfaceName)/qmi/pass_through", "N")
        }
        try write("\(usbInterface)/usbmisc/\(controlPort)/dev", "180:\(portNumber)")
        try write("\(usbInterface)/usbmisc/\(controlPort)/uevent",
                  "MAJOR=180\nMINOR=\(portNumber)\nDEVNAME=\(controlPort)")
        try link("\(usbInterface)/usbmisc/\(controlPort)/device", to: "../..")
        try link("\(usbInterface)/usbmisc/\(controlPort)/subsystem", to: up("\(usbInterface)/usbmisc/\(controlPort)") + "class/usbmisc")
        try link("class/usbmisc/\(controlPort)", to: "../../\(usbInterface)/usbmisc/\(controlPort)")
        try link("class/net/\(interfaceName)", to: "../../\(usbInterface)/net/\(interfaceName)")
        if let port = wwanPort {
            try write("\(usbInterface)/wwan/\(port)/type", "MBIM")
            try write("\(usbInterface)/wwan/\(port)/uevent", "DEVNAME=\(port)")
            try link("\(usbInterface)/wwan/\(port)/device", to: "../..")
            try link("\(usbInterface)/wwan/\(port)/subsystem", to: up("\(usbInterface)/wwan/\(port)") + "class/wwan")
            try link("class/wwan/\(port)", to: "../../\(usbInterface)/wwan/\(port)")
        }
    }

    /// Removes this modem's entries (the USB device and its class links).
    func remove() {
        var paths = ["class/usbmisc/\(controlPort)", "class/net/\(interfaceName)"]
        if let port = wwanPort { paths.append("class/wwan/\(port)") }
        for p in paths { unlink("\(root)/\(p)") }
        FileSystem.removeTree("\(root)/\(usbDevice)")
    }

    /// The relative path from the directory `relative` back to the sysfs root.
    private func up(_ relative: String) -> String {
        String(repeating: "../", count: relative.split(separator: "/").count)
    }

    /// The USB descriptors a one-interface device reports: device, configuration, the control
    /// interface, and for MBIM the CDC header, union and MBIM functional descriptors (4096-byte
    /// control messages, as the function's OPEN allows).
    private func descriptors(product: UInt16) -> [UInt8] {
        var w = ByteWriter()
        w.append([18, 1, 0x00, 0x02, 0, 0, 0, 64, 0x99, 0x11])   // device: USB 2.0, vendor 1199
        w.u16(product)
        w.append([0x00, 0x01, 1, 2, 3, 1])
        let mbim = modem.protocol == .mbim
        let functional: [UInt8] = mbim
            ? [5, 0x24, 0x00, 0x10, 0x01,                                    // CDC header 1.10
               5, 0x24, 0x06, 0, 1,                                          // union
               12, 0x24, 0x1b, 0x00, 0x01, 0x00, 0x10, 32, 128, 0xdc, 0x05, 0x20]  // MBIM 1.0
            : []
        let total = 9 + 9 + functional.count
        w.append([9, 2, UInt8(total & 0xff), UInt8(total >> 8), 1, 1, 0, 0xa0, 250])
        w.append([9, 4, 0, 0, 1, mbim ? 0x02 : 0xff, mbim ? 0x0e : 0xff, mbim ? 0x00 : 0xff, 0])
        w.append(functional)
        return w.bytes
    }

    private func writeBytes(_ relative: String, _ bytes: [UInt8]) throws(ModemDeviceError) {
        let path = "\(root)/\(relative)"
        do {
            try FileSystem.write(bytes, to: path)
        } catch {
            throw .system("write \(path)", error.code)
        }
    }

    private func makeDirectory(_ relative: String) throws(ModemDeviceError) {
        do {
            try FileSystem.makeDirectories("\(root)/\(relative)")
        } catch {
            throw .system(error.operation, error.code)
        }
    }

    private func write(_ relative: String, _ content: String) throws(ModemDeviceError) {
        let parts = relative.split(separator: "/")
        try makeDirectory(parts.dropLast().joined(separator: "/"))
        let path = "\(root)/\(relative)"
        do {
            try FileSystem.write(content + "\n", to: path)
        } catch {
            throw .system("write \(path)", error.code)
        }
    }

    private func link(_ relative: String, to target: String) throws(ModemDeviceError) {
        let parts = relative.split(separator: "/")
        try makeDirectory(parts.dropLast().joined(separator: "/"))
        let path = "\(root)/\(relative)"
        unlink(path)
        guard symlink(target, path) == 0 else { throw .system("symlink \(path)", errno) }
    }
}
