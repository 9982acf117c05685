import CellpathCore

extension DeviceShape {
    /// Every field of `profile`'s shape, as a capture of that device would have it.
    public init(profile: DeviceProfile) {
        self.init()
        manufacturer = profile.manufacturer
        model = profile.model
        bus = profile.bus.rawValue
        vendorID = DeviceProfile.hex4(profile.vendorID)
        productID = DeviceProfile.hex4(profile.productID)
        subsystemVendorID = profile.subsystemIDs.map { DeviceProfile.hex4($0.vendor) }
        subsystemDeviceID = profile.subsystemIDs.map { DeviceProfile.hex4($0.device) }
        driver = profile.driver
        usbInterfaceNumber = profile.bus == .usb ? profile.usbInterfaceNumber : nil
        `protocol` = profile.controlProtocol?.rawValue
        controlPort =
            switch profile.controlPort {
            case .cdcWDM: .cdcWDM
            case .wwanPort: .wwan
            case .none: ControlPort.none
            }
        extraPorts = profile.extraPorts
        netDevice =
            switch profile.netDevice {
            case .usbWWAN: .usbWWAN
            case .wwanDefaultLink: .wwanDefaultLink
            case .mhiNet: .mhiNet
            case .usbEthernet: .usbEthernet
            case .none: NetDevice.none
            }
        mbimExtensions = profile.mbimExtensions.rawValue
        fccLocked = profile.fccLocked
        fccUnlock = profile.fccUnlock?.rawValue
        qmiFirmwareRawIP = profile.qmi.firmwareRawIP
        qmiKernelRawIP = profile.qmi.kernelRawIP
        qmiDMSUIMRefused = profile.qmi.dmsUIMRefused
        qmiQMAP = profile.qmi.qmap
        qmiDataAggregation = false
        muxLinks = profile.netDevice == .none ? nil : 0
        ipv6LinkLocalOnly = profile.ipv6LinkLocalOnly
        slots = profile.slots
        simSlots = profile.defaultSIMSlots
    }

    /// The fields a capture did not read (nil), by their JSON keys; no protocol without a control port is read.
    public var unreadFields: [String] {
        let fields: [(CodingKeys, Bool)] = [
            (.manufacturer, manufacturer == nil), (.model, model == nil), (.bus, bus == nil),
            (.vendorID, vendorID == nil), (.productID, productID == nil), (.driver, driver == nil),
            (.protocol, `protocol` == nil && controlPort != ControlPort.none), (.controlPort, controlPort == nil),
            (.extraPorts, extraPorts == nil),
            (.netDevice, netDevice == nil), (.mbimExtensions, mbimExtensions == nil), (.fccLocked, fccLocked == nil),
            (.qmiFirmwareRawIP, qmiFirmwareRawIP == nil), (.qmiKernelRawIP, qmiKernelRawIP == nil),
            (.qmiDMSUIMRefused, qmiDMSUIMRefused == nil), (.qmiQMAP, qmiQMAP == nil),
            (.qmiDataAggregation, qmiDataAggregation == nil),
            (.muxLinks, muxLinks == nil && netDevice != NetDevice.none),
            (.ipv6LinkLocalOnly, ipv6LinkLocalOnly == nil), (.slots, slots == nil), (.simSlots, simSlots == nil)
        ]
        return fields.filter(\.1).map(\.0.stringValue)
    }

}

extension DeviceProfile {
    /// The slots of this device as a world starts it: none listed with one slot; with two, a
    /// SIM in slot 1 (active) and an eSIM without a profile in slot 2 (`SimulatedModem.adopt`).
    public var defaultSIMSlots: [SIMSlot] {
        guard slots == 2 else { return [] }
        return [
            SIMSlot(number: 1, content: .sim, active: true),
            SIMSlot(number: 2, content: .esimWithoutProfile, active: false)
        ]
    }

    /// The profile a captured `shape` describes (named `captured`). Bus, ids, driver, control
    /// port and net device must be there; a field not read takes the default of a plain device:
    /// MBIM 1.0 only, no FCC lock, raw-ip on both sides, DMS UIM answered, no QMAP (but mhi_net
    /// carries QMAP, and so does a modem captured with data aggregation on or mux links), a
    /// global IPv6 address, one slot (or as many as `sim_slots` lists). An FCC lock's unlock
    /// follows the driver.
    init(captured shape: DeviceShape) throws(ScenarioProblem) {
        func required<T>(_ value: T?, _ key: DeviceShape.CodingKeys, _ what: String) throws(ScenarioProblem) -> T {
            guard let value else {
                throw ScenarioProblem(field: key.stringValue, problem: "missing: the capture lacks \(what)")
            }
            return value
        }
        func bad(_ key: DeviceShape.CodingKeys, _ problem: String) -> ScenarioProblem {
            ScenarioProblem(field: key.stringValue, problem: problem)
        }
        let busText = try required(shape.bus, .bus, "the modem's bus (usb or pcie)")
        guard let bus = Bus(rawValue: busText) else { throw bad(.bus, "must be usb or pcie, got \"\(busText)\"") }
        let vendor = try Self.id(try required(shape.vendorID, .vendorID, "the vendor id"), .vendorID)
        let product = try Self.id(try required(shape.productID, .productID, "the product id"), .productID)
        var subsystem: (UInt16, UInt16)?
        if bus == .pcie {
            subsystem = (
                try Self.id(
                    try required(shape.subsystemVendorID, .subsystemVendorID, "the PCI subsystem vendor id"),
                    .subsystemVendorID),
                try Self.id(
                    try required(shape.subsystemDeviceID, .subsystemDeviceID, "the PCI subsystem device id"),
                    .subsystemDeviceID)
            )
        }
        let driver = try required(shape.driver, .driver, "the driver bound to the modem")
        let controlKind = try required(shape.controlPort, .controlPort, "how the control port is exposed")
        let netKind = try required(shape.netDevice, .netDevice, "how the net device is exposed")
        var controlProtocol: ModemProtocol?
        if controlKind != .none {
            let text = try required(shape.protocol, .protocol, "the control port's protocol (mbim or qmi)")
            guard let value = ModemProtocol(rawValue: text) else {
                throw bad(.protocol, "must be mbim or qmi, got \"\(text)\"")
            }
            controlProtocol = value
        }
        if controlKind == .cdcWDM || netKind == .usbWWAN || netKind == .usbEthernet, bus != .usb {
            throw bad(.controlPort, "a cdc-wdm port or a USB net device needs bus usb")
        }
        if controlKind == .wwan && bus != .pcie { throw bad(.controlPort, "a WWAN port is simulated on PCIe only") }
        let extensions = shape.mbimExtensions ?? 0
        guard let mbimExtensions = MBIMExtensions(rawValue: extensions) else {
            throw bad(.mbimExtensions, "must be 0, 2 or 3, got \(extensions)")
        }
        let fccLocked = shape.fccLocked ?? false
        var fccUnlock: FCCUnlock?
        if fccLocked {
            if let text = shape.fccUnlock {
                guard let value = FCCUnlock(rawValue: text) else {
                    let allowed = FCCUnlock.allCases.map(\.rawValue).joined(separator: ", ")
                    throw bad(.fccUnlock, "must be one of \(allowed), got \"\(text)\"")
                }
                fccUnlock = value
            } else {
                fccUnlock = driver == "mtk_t7xx" ? .atPort : driver == "iosm" ? .vendorMBIM : .qmiOverMBIM
            }
        }
        let slots = shape.slots ?? max(1, shape.simSlots?.count ?? 1)
        guard (1 ... 2).contains(slots) else { throw bad(.slots, "must be 1 or 2, got \(slots)") }
        if let listed = shape.simSlots, !listed.isEmpty {
            guard listed.map(\.number) == Array(1 ... slots) else {
                throw bad(.simSlots, "must list slots 1 to \(slots) in order, got \(listed.map(\.number))")
            }
            guard listed.count(where: \.active) == 1 else { throw bad(.simSlots, "must have exactly one active slot") }
        }
        let netDevice: NetDeviceKind =
            switch netKind {
            case .usbWWAN: .usbWWAN
            case .wwanDefaultLink: .wwanDefaultLink
            case .mhiNet: .mhiNet
            case .usbEthernet: .usbEthernet
            case .none: .none
            }
        let qmap =
            shape.qmiQMAP
            ?? (shape.qmiDataAggregation == true || (shape.muxLinks ?? 0) > 0 && controlProtocol == .qmi
                || netDevice == .mhiNet)
        let sessionLinks: SessionLinks =
            switch netDevice {
            case .usbWWAN where driver == "cdc_mbim": .vlan
            case .usbWWAN where qmap: .qmimux
            case .wwanDefaultLink: .wwanLink
            default: .none
            }
        let manufacturer = shape.manufacturer ?? "unknown"
        let model = shape.model ?? "unknown"
        self.init(
            name: .captured, models: "captured \(manufacturer) \(model)", manufacturer: manufacturer, model: model,
            bus: bus, vendorID: vendor, productID: product, subsystemIDs: subsystem, driver: driver,
            controlProtocol: controlProtocol,
            controlPort: controlKind == .cdcWDM ? .cdcWDM : controlKind == .wwan ? .wwanPort : .none,
            extraPorts: shape.extraPorts ?? [], netDevice: netDevice, mbimExtensions: mbimExtensions,
            fccLocked: fccLocked, fccUnlock: fccUnlock,
            qmi: QMIQuirks(
                firmwareRawIP: shape.qmiFirmwareRawIP ?? true, kernelRawIP: shape.qmiKernelRawIP ?? true,
                dmsUIMRefused: shape.qmiDMSUIMRefused ?? false, qmap: qmap),
            ipv6LinkLocalOnly: shape.ipv6LinkLocalOnly ?? false, sessionLinks: sessionLinks, slots: slots,
            usbInterfaceNumber: bus == .usb ? shape.usbInterfaceNumber ?? 0 : 0)
    }

    /// A 4-digit hex id (`2c7c`, or `0x2c7c` as sysfs writes PCI ids).
    private static func id(_ text: String, _ key: DeviceShape.CodingKeys) throws(ScenarioProblem) -> UInt16 {
        let digits = text.hasPrefix("0x") ? String(text.dropFirst(2)) : text
        guard digits.count == 4, let value = UInt16(digits, radix: 16) else {
            throw ScenarioProblem(field: key.stringValue, problem: "must be 4 hex digits, got \"\(text)\"")
        }
        return value
    }
}
