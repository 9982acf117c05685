import CellpathCore
import Foundation
import Glibc
import Simulator
import SimulatorScenario
import TestSupport
import Testing

/// The round trip of a device: `doctor --capture` in a world of the whole zoo (MBIMEx negotiated
/// through mbim-proxy as ModemManager would, the QMAP modem's bearer up), replayed with
/// `sim up --device-capture` — each captured shape is its profile's in every field doctor reads
/// (MBIMEx version, QMI data format and aggregation, DMS UIM refused, mux links, SIM slots),
/// `modems --json` lists the replayed world's modems as it listed the originals, and
/// `doctor --capture` of the replayed world records the same shapes again.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct DeviceCaptureRoundTripTests {
    /// What doctor does not read from a modem: the other protocol's fields (MBIMEx of a QMI
    /// modem, the QMI data format of an MBIM one), QMAP support before a bearer used it, IPv6
    /// link-local only, the kernel's QMI raw-ip where there is no `qmi/` directory (MBIM,
    /// mhi_net), an MBIM PCIe module's manufacturer.
    static let notReadByDoctor: Set<String> = [
        "mbim_extensions", "qmi_firmware_raw_ip", "qmi_dms_uim_refused", "qmi_qmap", "qmi_data_aggregation",
        "ipv6_link_local_only", "qmi_kernel_raw_ip", "manufacturer"
    ]

    /// The fields each protocol's modems must have read: they apply to them.
    static let readFor: [String: [String]] = [
        "mbim": ["mbim_extensions", "slots", "sim_slots", "mux_links"],
        "qmi": ["qmi_firmware_raw_ip", "qmi_dms_uim_refused", "qmi_data_aggregation", "slots", "sim_slots", "mux_links"]
    ]

    /// What a capture then records: each MBIM modem whose shape `shapes` gives (by `vid:pid`)
    /// an MBIMEx version has it negotiated through mbim-proxy (as ModemManager does), and each
    /// QMAP modem (QMI over a USB net device) has its bearer up; returns those modems' indexes.
    static func prepare(_ device: SimulatedDevice, _ shapes: (String) -> DeviceShape?) throws -> [Int] {
        let listed = try device.cellpath(["modems", "--json"])
        let modems = try #require(try JSONValue.parse(listed.stdout)["modems"]?.arrayValue)
        var bearers: [Int] = []
        for m in modems where m["mode"]?.stringValue == "modem" && m["supported"] == .bool(true) {
            let bus = ["usb", "pci"].lazy.compactMap { m[$0] }.first { $0["vendor_id"]?.stringValue != nil }
            let id =
                "\(bus?["vendor_id"]?.stringValue ?? ""):\(bus?["product_id"]?.stringValue ?? bus?["device_id"]?.stringValue ?? "")"
            guard let shape = shapes(id), let port = m[string: "device"], let index = m["index"]?.int else { continue }
            if let version = shape.mbimExtensions, version >= 2 {
                let open = try device.run([
                    "mbimcli", "-p", "-d", port, "--device-open-ms-mbimex-v\(version)", "--query-radio-state"
                ])
                #expect(open.status == 0, "\(id): \(open.stderr)")
            }
            if shape.qmiQMAP == true && shape.netDevice == .usbWWAN {
                let up = try device.cellpath(["bearer", "up", "-m", "\(index)"])
                #expect(up.status == 0, "\(id): \(up.stderr)")
                bearers.append(index)
            }
        }
        return bearers
    }

    /// `doctor --capture` on `device` into `file`, and its modems.
    static func capture(_ device: SimulatedDevice, to file: String) throws -> [DeviceCapture.Modem] {
        let doctor = try device.cellpath(["doctor", "--capture", file, "--json"])
        #expect(access(file, R_OK) == 0, "doctor wrote no capture: \(doctor.stderr)")
        return try DeviceCapture.load(path: file)
    }

    /// `vid:pid` of a shape.
    static func id(_ shape: DeviceShape) -> String { "\(shape.vendorID ?? ""):\(shape.productID ?? "")" }

    /// Each modem cellpath drives as `modems --json` lists it: protocol, ids, names, and its
    /// ports and interface without their numbers (the simulator numbers by scenario index).
    static func listedShapes(_ json: String) throws -> [String] {
        let modems = try #require(try JSONValue.parse(json)["modems"]?.arrayValue)
        return modems.filter { $0["mode"]?.stringValue == "modem" && $0["supported"] == .bool(true) }.map { m in
            let ids = ["usb", "pci"].compactMap { bus in
                m[bus]?["vendor_id"]?.stringValue.map {
                    "\(bus):\($0):\(m[bus]?["product_id"]?.stringValue ?? m[bus]?["device_id"]?.stringValue ?? "")"
                }
            }
            let ports = (m["ports"]?.arrayValue ?? []).compactMap(\.stringValue).map { $0.filter { !$0.isNumber } }
            return [
                m[string: "protocol"] ?? "-", ids.joined(), m[string: "manufacturer"] ?? "-", m[string: "model"] ?? "-",
                ports.joined(separator: ","), (m[string: "interface"] ?? "-").filter { !$0.isNumber }
            ].joined(separator: " ")
        }.sorted()
    }

    /// `expected` with null wherever `captured` has null (a field doctor did not read).
    static func masked(_ expected: DeviceShape, like captured: DeviceShape) throws -> NSDictionary {
        func dictionary(_ shape: DeviceShape) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(shape)) as? [String: Any])
        }
        var expected = try dictionary(expected)
        for (key, value) in try dictionary(captured) where value is NSNull { expected[key] = NSNull() }
        return expected as NSDictionary
    }

    @Test func everyZooModemDoctorCapturesIsReplayedWithTheSameShape() throws {
        let zoo = try Scenario.load(path: Repository.root + "/scripts/zoo-scenario.json")
        let profiles = Dictionary(
            DeviceProfile.zoo.map { (Self.id(DeviceShape(profile: $0)), $0) }, uniquingKeysWith: { first, _ in first })
        var capture = ""
        var original: [String] = []
        var modems: [DeviceCapture.Modem] = []
        try SimulatedDevice.with(zoo, connect: false) { device in
            capture = "/tmp/\(device.prefix)device-capture.json"
            let bearers = try Self.prepare(device) { profiles[$0].map(DeviceShape.init(profile:)) }
            #expect(bearers.count == 1, "the RM500Q's QMAP bearer")
            modems = try Self.capture(device, to: capture)
            original = try Self.listedShapes(device.cellpath(["modems", "--json"]).stdout)
            for index in bearers { #expect(try device.cellpath(["bearer", "down", "-m", "\(index)"]).status == 0) }
        }
        defer { unlink(capture) }
        #expect(modems.count == original.count && modems.count >= 10, "\(original)")
        for modem in modems {
            let shape = modem.shape
            let profile = try #require(profiles[Self.id(shape)], "no profile of \(shape)")
            var expected = DeviceShape(profile: profile)
            if profile.qmi.qmap && profile.netDevice == .usbWWAN {
                // Captured with its bearer up: aggregation on, its mux device stacked on the net device.
                expected.qmiDataAggregation = true
                expected.muxLinks = 1
            }
            #expect(
                try Self.masked(expected, like: shape) == (try Self.masked(shape, like: shape)),
                "\(profile.name): \(shape)")
            #expect(
                Set(shape.unreadFields).isSubset(of: Self.notReadByDoctor), "\(profile.name): \(shape.unreadFields)")
            for field in Self.readFor[shape.protocol ?? ""] ?? [] {
                #expect(!shape.unreadFields.contains(field), "\(profile.name): \(field) not read")
            }
            // Session links follow the driver, and QMAP where doctor reads it (behind mhi_net).
            let qmapUnread = shape.qmiQMAP == nil && profile.qmi.qmap && profile.netDevice != .mhiNet
            #expect(modem.profile.sessionLinks == profile.sessionLinks || qmapUnread, "\(profile.name)")
        }
        #expect(modems.contains { $0.shape.qmiQMAP == true && $0.shape.qmiDMSUIMRefused == true }, "the RM500Q")
        #expect(modems.contains { $0.shape.mbimExtensions == 3 && $0.shape.simSlots?.count == 2 }, "the EM160R")

        let prefix = WorldFixture.uniquePrefix()
        defer { _ = try? SimulatedWorld.down(prefix: prefix) }
        let up = try CellpathBinary.run(["sim", "up", "--device-capture", capture, "--prefix", prefix])
        #expect(up.status == 0, "\(up.stderr)")
        let device = SimulatedDevice(prefix: prefix)
        let replayed = try device.cellpath(["modems", "--json"])
        #expect(try Self.listedShapes(replayed.stdout) == original)

        // The replayed world, prepared the same way, is captured with the same shapes.
        let captured = Dictionary(modems.map { (Self.id($0.shape), $0.shape) }, uniquingKeysWith: { first, _ in first })
        let again = "/tmp/\(prefix)device-capture-again.json"
        defer { unlink(again) }
        let bearers = try Self.prepare(device) { captured[$0] }
        let recaptured = try Self.capture(device, to: again)
        for index in bearers { #expect(try device.cellpath(["bearer", "down", "-m", "\(index)"]).status == 0) }
        #expect(recaptured.count == modems.count)
        for modem in recaptured {
            #expect(modem.shape == captured[Self.id(modem.shape)], "\(Self.id(modem.shape))")
        }
    }

    /// `sim profiles --device NAME --capture FILE`, without root: the profile's whole shape, mode 0600.
    @Test func aProfileIsWrittenAsACaptureWithoutRoot() throws {
        let directory = "/tmp/\(WorldFixture.uniquePrefix())profiles"
        #expect(mkdir(directory, 0o777) == 0 && chmod(directory, 0o777) == 0)
        defer { _ = try? WorldFixture.output(["rm", "-rf", directory]) }
        func profiles(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.run(
                ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", CellpathBinary.path, "sim", "profiles"]
                    + arguments, environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
        }
        let file = directory + "/rm500q.json"
        let written = try profiles(["--device", "quectel-rm500q-qmap", "--capture", file])
        #expect(written.status == 0, "\(written.stderr)")
        let modems = try DeviceCapture.load(path: file)
        #expect(modems.map(\.shape) == [DeviceShape(profile: .named(.usbQMIQMAP))])
        var info = stat()
        #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let unknown = try profiles(["--device", "quectel-xyz", "--capture", file])
        #expect(
            unknown.status == 64 && unknown.stderr.contains("no device profile \"quectel-xyz\""), "\(unknown.stderr)")
        let alone = try profiles(["--device", "quectel-ec25-qmi"])
        #expect(alone.status == 64 && alone.stderr.contains("--device and --capture go together"), "\(alone.stderr)")
    }

    @Test func aCaptureThatCannotBeRebuiltIsRefusedBeforeAnyWorldExists() throws {
        let prefix = WorldFixture.uniquePrefix()
        let file = "/tmp/\(prefix)old-capture.json"
        #expect(FileManager.default.createFile(atPath: file, contents: Data(#"{"modems": []}"#.utf8)))
        defer { unlink(file) }
        let up = try CellpathBinary.run(["sim", "up", "--device-capture", file, "--prefix", prefix])
        #expect(up.status == 65, "\(up.stderr)")
        #expect(up.stderr.contains("\(file):1:1: format: missing: a capture of an older cellpath"), "\(up.stderr)")
        #expect(access("/run/cellpath-sim/\(prefix)", F_OK) != 0)
    }
}
