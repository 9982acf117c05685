import Glibc
import Testing

@testable import ModemManagerBackend

/// Whether the system bus's socket file is missing, so that `--backend auto` need not ask GLib
/// for a bus that cannot be reached.
@Suite struct SystemBusAddressTests {
    @Test func withoutTheVariableTheSystemsSocketIsTheAddress() {
        #expect(SystemBusAddress(environment: [:]).text == "unix:path=/var/run/dbus/system_bus_socket")
        #expect(SystemBusAddress(environment: ["DBUS_SYSTEM_BUS_ADDRESS": ""]) == SystemBusAddress(environment: [:]))
        #expect(
            SystemBusAddress(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/run/world/bus"]).socketPath
                == "/run/world/bus")
    }

    @Test(arguments: [
        "unix:abstract=/tmp/dbus-x", "tcp:host=localhost,port=7000", "unix:path=/a;unix:path=/b",
        "unix:path=/run/with%20space", "unix:path=relative", "unix:guid=0123"
    ])
    func addressesOfOtherFormsAreLeftToGLib(_ text: String) {
        #expect(SystemBusAddress(text).socketPath == nil)
        #expect(SystemBusAddress(text).missingSocket == nil)
    }

    @Test func onlyAMissingSocketFileIsMissing() throws {
        var template = Array("/tmp/cellpath-bus-XXXXXX".utf8CString)
        let directory = try #require(
            template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) })
        defer { rmdir(directory) }
        let socketPath = "\(directory)/system_bus_socket"
        let address = SystemBusAddress("unix:path=\(socketPath),guid=0123")
        #expect(address.socketPath == socketPath)
        #expect(address.missingSocket == socketPath)
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(socket >= 0)
        defer { close(socket) }
        var name = sockaddr_un()
        name.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &name.sun_path) { $0.copyBytes(from: socketPath.utf8) }
        let bound = withUnsafePointer(to: &name) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        defer { unlink(socketPath) }
        #expect(address.missingSocket == nil)
    }
}
