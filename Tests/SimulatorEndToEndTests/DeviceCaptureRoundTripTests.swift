import CellpathCore
import Foundation
import Glibc
import Simulator
import SimulatorScenario
import TestSupport
import Testing

/// The round trip of a device: `doctor --capture` in a world of the whole zoo, replayed with
/// `sim up --device-capture` — each captured shape is its profile's in every field doctor reads,
/// and `modems --json` lists the replayed world's modems as it listed the originals.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct DeviceCaptureRoundTripTests {
    /// What doctor does not read from a modem: the firmware's capabilities, the kernel's QMI
    /// raw-ip where there is no `qmi/` directory (MBIM, mhi_net), an MBIM PCIe module's manufacturer.
    static let notReadByDoctor: Set<String> = [
        "mbim_extensions", "qmi_firmware_raw_ip", "qmi_dms_uim_refused", "qmi_qmap", "ipv6_link_local_only", "slots",
        "qmi_kernel_raw_ip", "manufacturer"
    ]

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
        var capture = ""
        var original: [String] = []
        try SimulatedDevice.with(zoo, connect: false) { device in
            capture = "/tmp/\(device.prefix)device-capture.json"
            let doctor = try device.cellpath(["doctor", "--capture", capture, "--json"])
            #expect(access(capture, R_OK) == 0, "doctor wrote no capture: \(doctor.stderr)")
            original = try Self.listedShapes(device.cellpath(["modems", "--json"]).stdout)
        }
        defer { unlink(capture) }
        let modems = try DeviceCapture.load(path: capture)
        #expect(modems.count == original.count && modems.count >= 10, "\(original)")
        for modem in modems {
            let shape = modem.shape
            let profile = try #require(
                DeviceProfile.zoo.first {
                    DeviceShape(profile: $0).vendorID == shape.vendorID
                        && DeviceShape(profile: $0).productID == shape.productID
                }, "no profile of \(shape)")
            #expect(
                try Self.masked(DeviceShape(profile: profile), like: shape)
                    == (try Self.masked(shape, like: shape)), "\(profile.name): \(shape)")
            #expect(
                Set(shape.unreadFields).isSubset(of: Self.notReadByDoctor), "\(profile.name): \(shape.unreadFields)")
            // Session links follow the driver, and QMAP where doctor reads it (behind mhi_net).
            let qmapUnread = shape.qmiQMAP == nil && profile.qmi.qmap && profile.netDevice != .mhiNet
            #expect(modem.profile.sessionLinks == profile.sessionLinks || qmapUnread, "\(profile.name)")
        }

        let prefix = WorldFixture.uniquePrefix()
        defer { _ = try? SimulatedWorld.down(prefix: prefix) }
        let up = try CellpathBinary.run(["sim", "up", "--device-capture", capture, "--prefix", prefix])
        #expect(up.status == 0, "\(up.stderr)")
        let replayed = try SimulatedDevice(prefix: prefix).cellpath(["modems", "--json"])
        #expect(try Self.listedShapes(replayed.stdout) == original)
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
