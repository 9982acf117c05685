import CellpathCore
import SystemSupport
import Testing

@testable import CommandLineKit

/// The privilege check the runtime makes before a command runs: what is missing is named, with
/// the lines that grant it, as a permission error (exit 77).
struct CommandPrivilegesTests {
    @Test func aMissingCapabilityIsNamedWithItsUnitAndSetcapLines() throws {
        #expect(throws: Never.self) {
            try CommandPrivileges.netAdmin.check("bearer up", effective: Capability.netAdmin.mask, uid: 1000)
        }
        let error = try #require(throws: CellpathError.self) {
            try CommandPrivileges.netAdmin.check("bearer up", effective: Capability.netRaw.mask, uid: 0)
        }
        #expect(error.kind == .permission && ExitCode.forError(error) == .permissionDenied)
        #expect(error.message == "cellpath bearer up needs CAP_NET_ADMIN, which this process does not have")
        #expect(error.hint?.contains("AmbientCapabilities=CAP_NET_ADMIN") == true, "\(error.hint ?? "")")
        #expect(error.hint?.contains("sudo setcap cap_net_admin+ep ") == true, "\(error.hint ?? "")")
        #expect(throws: CellpathError.self) { try CommandPrivileges.netAdmin.check("bearer up", effective: nil) }
    }

    @Test func rootIsNotReplacedByCapabilities() throws {
        #expect(throws: Never.self) { try CommandPrivileges.root.check("sim up", effective: 0, uid: 0) }
        let error = try #require(throws: CellpathError.self) {
            try CommandPrivileges.root.check("sim up", effective: ~0, uid: 65534)
        }
        #expect(error.message.hasPrefix("cellpath sim up needs root") && error.hint == "run it with sudo")
        #expect(throws: Never.self) { try CommandPrivileges.none.check("fetch", effective: 0, uid: 65534) }
    }
}
