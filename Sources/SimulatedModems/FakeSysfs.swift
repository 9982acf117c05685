import Glibc
import SimulatorScenario
import SystemSupport

/// The sysfs entries the kernel would create for one simulated modem, under `<run dir>/sys`:
/// a USB device with one interface bound to `cdc_mbim` or `qmi_wwan`, its control port
/// `usbmisc/cdc-wdmN` and its network interface `net/<iface>`; MBIM modems also get a WWAN-class
/// port `wwan/wwanNmbim0` (type "MBIM") as PCIe modems have.
struct FakeSysfs {
    let root: String
    let index: Int
    let modem: SimulatedModem
    let controlPort: String
    let interfaceName: String

    var usbDevice: String { "devices/cellpath-sim/usb1/1-\(index + 1)" }
    var usbInterface: String { "\(usbDevice)/1-\(index + 1):1.0" }
    var driver: String { modem.protocol == .mbim ? "cdc_mbim" : "qmi_wwan" }
    var wwanPort: String? { modem.protocol == .mbim ? "wwan\(index)mbim0" : nil }

    /// Creates the tree (idempotent).
    func create() throws(ModemDeviceError) {
        let (vendor, product) = modem.protocol == .mbim ? ("1199", "9079") : ("2c7c", "0125")
        try write("\(usbDevice)/idVendor", vendor)
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
        try write("\(usbInterface)/usbmisc/\(controlPort)/dev", "180:\(index)")
        try write("\(usbInterface)/usbmisc/\(controlPort)/uevent", "MAJOR=180\nMINOR=\(index)\nDEVNAME=\(controlPort)")
        try link("\(usbInterface)/usbmisc/\(controlPort)/device", to: "../..")
        try link("class/usbmisc/\(controlPort)", to: "../../\(usbInterface)/usbmisc/\(controlPort)")
        try link("class/net/\(interfaceName)", to: "../../\(usbInterface)/net/\(interfaceName)")
        if let port = wwanPort {
            try write("\(usbInterface)/wwan/\(port)/type", "MBIM")
            try write("\(usbInterface)/wwan/\(port)/uevent", "DEVNAME=\(port)")
            try link("\(usbInterface)/wwan/\(port)/device", to: "../..")
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
