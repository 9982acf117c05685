import CellpathCore
import Glibc
import SystemSupport

/// A device capture (`cellpath doctor --capture`, or `cellpath sim profiles --capture`): JSON
/// with a `format`, and per modem its `shape` beside what `doctor` recorded for people (the
/// modem's report, its sysfs subtree). The simulator reads the shapes only.
public enum DeviceCapture {
    /// The keys of a capture's top level and of each of its modems.
    static let keys = ["format", "cellpath", "source", "modemmanager_running", "modems"]
    static let modemKeys = ["index", "report", "sysfs", "shape"]

    /// The capture of `profile` as one modem, as JSON text.
    public static func encoded(_ profile: DeviceProfile) -> [UInt8] {
        struct Entry: Encodable {
            let index: Int
            let shape: DeviceShape
        }
        struct Capture: Encodable {
            let format: Int
            let cellpath: String
            let source: String
            let modems: [Entry]
        }
        let capture = Capture(
            format: DeviceShape.captureFormat, cellpath: CellpathVersion.current,
            source: "cellpath sim profiles --capture \(profile.name.rawValue)",
            modems: [Entry(index: 0, shape: DeviceShape(profile: profile))])
        let bytes = try? JSONEncoding.encode(capture, format: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return (bytes ?? []) + [UInt8(ascii: "\n")]
    }

    /// One modem of a capture: its shape as captured, and the profile that rebuilds it.
    public struct Modem: Sendable {
        public let shape: DeviceShape
        public let profile: DeviceProfile

        /// The modem a capture of `profile` holds (`sim profiles --capture`).
        public init(profile: DeviceProfile) {
            self.init(shape: DeviceShape(profile: profile), profile: profile)
        }

        init(shape: DeviceShape, profile: DeviceProfile) {
            self.shape = shape
            self.profile = profile
        }
    }

    /// The modems of a capture. Errors are `.dataError` and name the file and the field:
    /// `dev.json: modems[0].shape.driver: missing: the capture lacks …`.
    public static func decode(_ data: [UInt8], source: String) throws -> [Modem] {
        let root: JSONNode
        do {
            root = try StrictJSONParser.parse(data)
        } catch {
            throw CellpathError(.dataError, "\(source):\(error.position): not valid JSON: \(error.message)")
        }
        let positions = FieldPositions()
        positions.record("", root.position)
        do {
            return try read(root, positions)
        } catch {
            let place = positions.position(of: error.field).map { "\(source):\($0)" } ?? source
            throw CellpathError(
                .dataError, "\(place): \(error.field): \(error.problem)",
                hint: "capture the device with this cellpath: sudo cellpath doctor --capture FILE")
        }
    }

    /// Reads and decodes the capture file at `path`.
    public static func load(path: String) throws -> [Modem] {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.read(path, limit: 16 << 20)
        } catch {
            let kind: FailureKind = error.code == ENOENT || error.code == EISDIR ? .dataError : .unavailable
            throw CellpathError(kind, "cannot read device capture \(path): \(error.reason)")
        }
        return try decode(bytes, source: path)
    }

    private static func read(_ root: JSONNode, _ positions: FieldPositions) throws(ScenarioProblem) -> [Modem] {
        let o = try ObjectReader(root, path: "", keys: keys, positions: positions)
        let format = try o.int("format")
        guard let format, format >= DeviceShape.oldestReadableFormat else {
            throw ScenarioProblem(
                field: "format",
                problem: format.map { "format \($0) has no device shapes" }
                    ?? "missing: a capture of an older cellpath has no device shapes")
        }
        let modems: [Modem] =
            try o.array("modems") { (_, node, path) throws(ScenarioProblem) -> Modem in
                try o.element(node, path: path, keys: modemKeys) { m throws(ScenarioProblem) -> Modem in
                    guard
                        let shape = try m.object(
                            "shape", keys: DeviceShape.CodingKeys.allCases.map(\.stringValue),
                            { s throws(ScenarioProblem) in try readShape(s) })
                    else {
                        throw ScenarioProblem(field: m.field("shape"), problem: "missing: the capture lacks its shape")
                    }
                    do throws(ScenarioProblem) {
                        return Modem(shape: shape, profile: try DeviceProfile(captured: shape))
                    } catch {
                        throw ScenarioProblem(field: m.field("shape.\(error.field)"), problem: error.problem)
                    }
                }
            } ?? []
        guard !modems.isEmpty else { throw ScenarioProblem(field: "modems", problem: "the capture has no modem") }
        return modems
    }

    /// A shape object; null fields stay nil (not read).
    static func readShape(_ s: ObjectReader) throws(ScenarioProblem) -> DeviceShape {
        var shape = DeviceShape()
        shape.manufacturer = try s.string("manufacturer", nullable: true)
        shape.model = try s.string("model", nullable: true)
        shape.bus = try s.string("bus", nullable: true)
        shape.vendorID = try s.string("vendor_id", nullable: true)
        shape.productID = try s.string("product_id", nullable: true)
        shape.subsystemVendorID = try s.string("subsystem_vendor_id", nullable: true)
        shape.subsystemDeviceID = try s.string("subsystem_device_id", nullable: true)
        shape.driver = try s.string("driver", nullable: true)
        shape.usbInterfaceNumber = try s.int("usb_interface_number", nullable: true)
        shape.protocol = try s.string("protocol", nullable: true)
        shape.controlPort = try s.choice("control_port", DeviceShape.ControlPort.self, nullable: true)
        shape.extraPorts = try s.strings("extra_ports")
        shape.netDevice = try s.choice("net_device", DeviceShape.NetDevice.self, nullable: true)
        shape.mbimExtensions = try s.int("mbim_extensions", nullable: true)
        shape.fccLocked = try s.bool("fcc_locked", nullable: true)
        shape.fccUnlock = try s.string("fcc_unlock", nullable: true)
        shape.qmiFirmwareRawIP = try s.bool("qmi_firmware_raw_ip", nullable: true)
        shape.qmiKernelRawIP = try s.bool("qmi_kernel_raw_ip", nullable: true)
        shape.qmiDMSUIMRefused = try s.bool("qmi_dms_uim_refused", nullable: true)
        shape.qmiQMAP = try s.bool("qmi_qmap", nullable: true)
        shape.qmiDataAggregation = try s.bool("qmi_data_aggregation", nullable: true)
        shape.muxLinks = try s.int("mux_links", nullable: true)
        shape.ipv6LinkLocalOnly = try s.bool("ipv6_link_local_only", nullable: true)
        shape.slots = try s.int("slots", nullable: true)
        shape.simSlots = try s.array("sim_slots", nullable: true) {
            (_, node, path) throws(ScenarioProblem) -> SIMSlot in
            try s.element(node, path: path, keys: SIMSlot.CodingKeys.allCases.map(\.stringValue)) {
                slot throws(ScenarioProblem) -> SIMSlot in
                guard let number = try slot.int("slot"), let active = try slot.bool("active"),
                    let content = try slot.choice("content", SIMSlot.Content.self)
                else {
                    throw ScenarioProblem(field: slot.field("slot"), problem: "a slot needs slot, content and active")
                }
                return SIMSlot(number: number, content: content, active: active)
            }
        }
        return shape
    }
}

extension SimulatedModem {
    /// Takes `profile`'s protocol, manufacturer, model and slots (an eSIM second slot for two).
    mutating func adopt(_ profile: DeviceProfile) {
        `protocol` = profile.controlProtocol ?? .mbim
        manufacturer = profile.manufacturer
        model = profile.model
        if profile.slots == 2 { secondSlot = SecondSIMSlot(esim: true, sim: nil) }
    }

    /// Fills slots 1 and 2 as captured (a SIM or an eSIM with a profile gets a SIM of its own,
    /// another content none) and makes the captured active slot active.
    mutating func fill(_ slots: [SIMSlot], index: Int) {
        guard slots.count == 2 else { return }
        let holdsSIM = { (slot: SIMSlot) in slot.content == .sim || slot.content == .esim }
        if !holdsSIM(slots[0]) { sim = nil }
        let second = slots[1]
        secondSlot = SecondSIMSlot(
            esim: second.content == .esim || second.content == .esimWithoutProfile,
            sim: holdsSIM(second) ? SimulatedSIM(index: index + Self.secondSIMIndexOffset) : nil)
        activeSlot = slots.first { $0.active }?.number ?? 1
    }

    /// The identities of a replayed modem's second SIM are those of SIM `index + 50`.
    static let secondSIMIndexOffset = 50
}

extension Scenario {
    /// The scenario with a modem of each captured profile after its own modems (in place of them
    /// when `replacingModems`), each with the IMEI and SIM of its index; validated as a scenario file is.
    public func adding(captured profiles: [DeviceProfile], replacingModems: Bool) throws -> Scenario {
        try adding(captured: profiles.map(DeviceCapture.Modem.init(profile:)), replacingModems: replacingModems)
    }

    /// The scenario with a modem of each captured modem, as `adding(captured:)` profiles, its
    /// SIM slots filled as captured.
    public func adding(captured modems: [DeviceCapture.Modem], replacingModems: Bool) throws -> Scenario {
        var scenario = self
        if replacingModems { scenario.modems = [] }
        for captured in modems {
            let index = scenario.modems.count
            var modem = SimulatedModem(index: index)
            modem.device = .captured
            modem.capturedProfile = captured.profile
            modem.adopt(captured.profile)
            modem.fill(captured.shape.simSlots ?? [], index: index)
            scenario.modems.append(modem)
        }
        return try Scenario.decode(scenario.encoded(), source: "the scenario with the captured devices")
    }
}
