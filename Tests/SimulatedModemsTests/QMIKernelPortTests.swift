import CellpathCore
import Glibc
import Synchronization
import SystemSupport
import TestSupport
import Testing

@testable import SimulatedModems

/// The simulated qmi_wwan `qmi/` attributes: a host's write is never lost, however close it
/// follows the simulated kernel's own rewrite of the same file.
@Suite struct QMIKernelPortTests {
    /// Mux links made and removed by name, nothing else.
    final class MuxLinks: BearerNetwork {
        let links = Mutex<[String]>([])
        func connect(modemIndex: Int, ipType: BearerIPType) throws -> BearerAssignment {
            throw SystemError("connect", code: ENOTSUP)
        }
        func disconnect(modemIndex: Int) {}
        func addMuxLink(modemIndex: Int, muxID: UInt8) throws -> String {
            links.withLock { links in
                let name = "qmimux\((0...).first { !links.contains("qmimux\($0)") }!)"
                links.append(name)
                return name
            }
        }
        func removeMuxLink(modemIndex: Int, name: String) { links.withLock { $0.removeAll { $0 == name } } }
        func isInterfaceUp(modemIndex: Int) -> Bool { false }
    }

    /// A sysfs root with `class/net/wwan0` and its `qmi/` attributes, as the simulator writes them.
    private func makeRoot() throws -> String {
        let root = try TemporaryDirectory.make("cellpath-qmi-port")
        try FileSystem.makeDirectories("\(root)/devices/usb1/1-1/1-1:1.4/net/wwan0/qmi")
        try FileSystem.makeDirectories("\(root)/class/net")
        #expect(symlink("../../devices/usb1/1-1/1-1:1.4/net/wwan0", "\(root)/class/net/wwan0") == 0)
        for (name, text) in [("raw_ip", "Y\n"), ("add_mux", ""), ("del_mux", "")] {
            try FileSystem.write(text, to: "\(root)/class/net/wwan0/qmi/\(name)")
        }
        return root
    }

    /// A host's write into the attribute, in place, as `echo 1 > qmi/del_mux` makes it.
    private func hostWrite(_ text: String, _ path: String) throws {
        try FileSystem.overwrite(text, at: path)
    }

    /// As `bearer down` then `bearer up` at once: the host writes add_mux as soon as the list
    /// the port rewrites there no longer holds the mux, before the port rewrites del_mux. Both
    /// writes of add_mux, the port's and the host's, are events in a row.
    @Test func anAddWrittenRightAfterThePortsOwnListIsCarriedOut() throws {
        let root = try makeRoot()
        defer { FileSystem.removeTree(root) }
        let network = MuxLinks()
        let port = try #require(
            QMIKernelPort(sysfsRoot: root, interfaceName: "wwan0", index: 0, bearerNetwork: network))
        let qmi = "\(root)/class/net/wwan0/qmi"
        try hostWrite("1\n", "\(qmi)/add_mux")
        port.drain()
        #expect(port.muxLink(for: 1) == "qmimux0")
        var addAgain = true
        port.afterOwnWrite = { attribute in
            guard attribute == "add_mux", addAgain else { return }
            addAgain = false
            #expect((try? hostWrite("1\n", "\(qmi)/add_mux")) != nil)
        }
        try hostWrite("1\n", "\(qmi)/del_mux")
        port.drain()
        #expect(!addAgain)
        #expect(port.muxLink(for: 1) == "qmimux0")
        #expect(network.links.withLock { $0 } == ["qmimux0"])
        #expect(FileSystem.readText("\(qmi)/add_mux") == "0x01\n")
    }
}
