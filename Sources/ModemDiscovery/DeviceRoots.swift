/// Where discovery looks: the sysfs and /dev roots, `/sys` and `/dev` on a real machine.
/// `cellpath sim env` / `sim exec` point them at the simulated world's tree with
/// `CELLPATH_SYSFS_ROOT` and `CELLPATH_DEV_ROOT`, so that discovery there finds the simulated
/// modems and nothing of the host's.
public struct DeviceRoots: Sendable, Equatable {
    public static let sysfsVariable = "CELLPATH_SYSFS_ROOT"
    public static let devVariable = "CELLPATH_DEV_ROOT"

    public var sysfs: String
    public var dev: String

    public init(sysfs: String = "/sys", dev: String = "/dev") {
        self.sysfs = sysfs
        self.dev = dev
    }

    /// The roots the environment names, else the real ones.
    public init(environment: [String: String]) {
        self.init(
            sysfs: environment[Self.sysfsVariable].flatMap { $0.isEmpty ? nil : $0 } ?? "/sys",
            dev: environment[Self.devVariable].flatMap { $0.isEmpty ? nil : $0 } ?? "/dev")
    }
}
