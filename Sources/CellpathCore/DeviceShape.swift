/// What the kernel and the firmware present for one modem, as a device capture records it
/// (`doctor --capture`, each modem's `shape`): bus and ids, driver, ports, net device, and the
/// protocol's capabilities. A nil field was not read: `doctor` reads sysfs, the modem's status and
/// what its firmware negotiated (the MBIMEx version through mbim-proxy, the QMI data format, DMS
/// UIM refused, the SIM slots), not every capability (IPv6 link-local only, an FCC lock's unlock);
/// a capture written from a simulator profile has every field. The simulator rebuilds a modem
/// from a shape (`cellpath sim up --device-capture`), taking a documented default for each nil.
public struct DeviceShape: Sendable, Equatable, Encodable {
    /// The capture format this shape belongs to (`format` at the top of a capture): 3 added the
    /// QMI data aggregation state, the mux links and the SIM slots' states.
    public static let captureFormat = 3
    /// The oldest format still read: 2, the first with shapes.
    public static let oldestReadableFormat = 2

    /// How the control port is exposed: `cdc-wdm` (usbmisc), `wwan` (a WWAN-class port), `none`.
    public enum ControlPort: String, Sendable, CaseIterable, Encodable {
        case cdcWDM = "cdc-wdm", wwan, none
    }

    /// How the data net device is exposed: under the USB interface (`usb-wwan`, or `usb-ethernet`
    /// for a router-mode modem's cdc_ether), the WWAN framework's default link, mhi_net's
    /// `mhi_hwipN`, or none.
    public enum NetDevice: String, Sendable, CaseIterable, Encodable {
        case usbWWAN = "usb-wwan", wwanDefaultLink = "wwan-default-link", mhiNet = "mhi-net"
        case usbEthernet = "usb-ethernet", none
    }

    public var manufacturer: String?
    public var model: String?
    /// `usb` or `pcie`.
    public var bus: String?
    /// USB VID and PID, or PCI vendor and device, as 4 lower-case hex digits.
    public var vendorID: String?
    public var productID: String?
    /// PCI subsystem vendor and device (PCIe only).
    public var subsystemVendorID: String?
    public var subsystemDeviceID: String?
    /// The driver of the function carrying the control port (or the net device without one).
    public var driver: String?
    /// The USB interface number of that function (USB only).
    public var usbInterfaceNumber: Int?
    /// `mbim`, `qmi`, or nil without a control port.
    public var `protocol`: String?
    public var controlPort: ControlPort?
    /// The other ports by type (`AT`, `XMMRPC`).
    public var extraPorts: [String]?
    public var netDevice: NetDevice?
    /// The MBIM extension version negotiated (0 for MBIM 1.0 only, 2, 3).
    public var mbimExtensions: Int?
    /// Radio-on refused until the host unlocks it, and how it is unlocked (`qmi-over-mbim`, `at-port`, `vendor-mbim`).
    public var fccLocked: Bool?
    public var fccUnlock: String?
    /// QMI: the firmware's link layer (WDA: raw-ip, else 802.3), the kernel's `qmi/raw_ip`, DMS
    /// UIM commands refused (UIM-only firmware), QMAP multiplexing supported.
    public var qmiFirmwareRawIP: Bool?
    public var qmiKernelRawIP: Bool?
    public var qmiDMSUIMRefused: Bool?
    public var qmiQMAP: Bool?
    /// QMI: QMAP data aggregation on when captured (WDA); the firmware starts with it off.
    public var qmiDataAggregation: Bool?
    /// The data links stacked on the net device when captured (QMAP `qmimuxN`, VLANs, WWAN links).
    public var muxLinks: Int?
    /// IP Configuration reports only a link-local IPv6 address (the global one by router advertisement).
    public var ipv6LinkLocalOnly: Bool?
    /// SIM slots (1, or 2).
    public var slots: Int?
    /// Each slot's content and which is active, on a modem with several (empty with one).
    public var simSlots: [SIMSlot]?

    public init() {}

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case manufacturer, model, bus
        case vendorID = "vendor_id", productID = "product_id"
        case subsystemVendorID = "subsystem_vendor_id", subsystemDeviceID = "subsystem_device_id"
        case driver
        case usbInterfaceNumber = "usb_interface_number"
        case `protocol`
        case controlPort = "control_port", extraPorts = "extra_ports", netDevice = "net_device"
        case mbimExtensions = "mbim_extensions"
        case fccLocked = "fcc_locked", fccUnlock = "fcc_unlock"
        case qmiFirmwareRawIP = "qmi_firmware_raw_ip", qmiKernelRawIP = "qmi_kernel_raw_ip"
        case qmiDMSUIMRefused = "qmi_dms_uim_refused", qmiQMAP = "qmi_qmap"
        case qmiDataAggregation = "qmi_data_aggregation", muxLinks = "mux_links"
        case ipv6LinkLocalOnly = "ipv6_link_local_only"
        case slots
        case simSlots = "sim_slots"
    }

    /// Writes every field, nil as null (a field not read stays visible as such).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(manufacturer, forKey: .manufacturer)
        try c.encode(model, forKey: .model)
        try c.encode(bus, forKey: .bus)
        try c.encode(vendorID, forKey: .vendorID)
        try c.encode(productID, forKey: .productID)
        try c.encode(subsystemVendorID, forKey: .subsystemVendorID)
        try c.encode(subsystemDeviceID, forKey: .subsystemDeviceID)
        try c.encode(driver, forKey: .driver)
        try c.encode(usbInterfaceNumber, forKey: .usbInterfaceNumber)
        try c.encode(`protocol`, forKey: .protocol)
        try c.encode(controlPort, forKey: .controlPort)
        try c.encode(extraPorts, forKey: .extraPorts)
        try c.encode(netDevice, forKey: .netDevice)
        try c.encode(mbimExtensions, forKey: .mbimExtensions)
        try c.encode(fccLocked, forKey: .fccLocked)
        try c.encode(fccUnlock, forKey: .fccUnlock)
        try c.encode(qmiFirmwareRawIP, forKey: .qmiFirmwareRawIP)
        try c.encode(qmiKernelRawIP, forKey: .qmiKernelRawIP)
        try c.encode(qmiDMSUIMRefused, forKey: .qmiDMSUIMRefused)
        try c.encode(qmiQMAP, forKey: .qmiQMAP)
        try c.encode(qmiDataAggregation, forKey: .qmiDataAggregation)
        try c.encode(muxLinks, forKey: .muxLinks)
        try c.encode(ipv6LinkLocalOnly, forKey: .ipv6LinkLocalOnly)
        try c.encode(slots, forKey: .slots)
        try c.encode(simSlots, forKey: .simSlots)
    }

}
