import CellpathCore
import Glibc
import SystemSupport

/// What a command needs beyond an ordinary user's rights, declared once in its spec. The
/// runtime checks it before the command runs, so that a command without it fails before it
/// changes anything (exit 77, naming what is missing and how to grant it). Access to a modem's
/// control port is checked where the port is opened, once the modem is chosen.
package struct CommandPrivileges: Sendable, Equatable {
    /// The capabilities it needs in its effective set.
    package var capabilities: [Capability]
    /// Whether it needs to be root (the simulator: namespaces, TUN devices, /run/cellpath-sim).
    package var root: Bool

    package init(capabilities: [Capability] = [], root: Bool = false) {
        self.capabilities = capabilities
        self.root = root
    }

    /// An ordinary user's rights.
    package static let none = CommandPrivileges()
    /// CAP_NET_ADMIN: the commands that configure a bearer's interface.
    package static let netAdmin = CommandPrivileges(capabilities: [.netAdmin])
    /// Root.
    package static let root = CommandPrivileges(root: true)

    /// What it needs and what happens without it, for its help and the man page; nil for none.
    package var summary: String? {
        let needs = (root ? ["root"] : []) + capabilities.map(\.name)
        guard !needs.isEmpty else { return nil }
        return "Needs \(needs.joined(separator: " and ")), checked before it changes anything.\n"
            + "Without it: exit 77, saying how to grant it (docs/operations.md, Privileges)."
    }

    /// Throws `.permission` unless this process holds every privilege declared; `command` is
    /// the command's name as typed (`bearer up`).
    package func check(
        _ command: String, effective: UInt64? = Capability.effectiveSet, uid: uid_t = geteuid()
    ) throws(CellpathError) {
        if root && uid != 0 {
            throw CellpathError(
                .permission, "cellpath \(command) needs root (network namespaces and TUN devices)",
                hint: "run it with sudo")
        }
        let missing = capabilities.filter { (effective ?? 0) & $0.mask == 0 }
        guard !missing.isEmpty else { return }
        throw CellpathError(
            .permission,
            "cellpath \(command) needs \(missing.map(\.name).joined(separator: " ")), which this process does not have",
            hint: "run it with sudo; or " + Capability.howToGrant(missing))
    }
}
