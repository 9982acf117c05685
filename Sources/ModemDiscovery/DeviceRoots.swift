/// Where discovery looks: the sysfs, /dev and udev roots, `/sys`, `/dev` and `/run/udev` on a
/// real machine. `cellpath sim env` / `sim exec` point them at the simulated world's tree with
/// `CELLPATH_SYSFS_ROOT`, `CELLPATH_DEV_ROOT` and `CELLPATH_UDEV_ROOT`, so that discovery there
/// finds the simulated modems and nothing of the host's.
public struct DeviceRoots: Sendable, Equatable {
    public static let sysfsVariable = "CELLPATH_SYSFS_ROOT"
    public static let devVariable = "CELLPATH_DEV_ROOT"
    public static let udevVariable = "CELLPATH_UDEV_ROOT"

    public var sysfs: String
    public var dev: String
    /// udev's run directory: its database of device properties is `data/` in it.
    public var udev: String

    public init(sysfs: String = "/sys", dev: String = "/dev", udev: String = "/run/udev") {
        self.sysfs = sysfs
        self.dev = dev
        self.udev = udev
    }

    /// The roots the environment names, else the real ones.
    public init(environment: [String: String]) {
        self.init(
            sysfs: environment[Self.sysfsVariable].flatMap { $0.isEmpty ? nil : $0 } ?? "/sys",
            dev: environment[Self.devVariable].flatMap { $0.isEmpty ? nil : $0 } ?? "/dev",
            udev: environment[Self.udevVariable].flatMap { $0.isEmpty ? nil : $0 } ?? "/run/udev")
    }
}

extension DiscoveredModem {
    /// Whether the modem is a simulated one: discovery found it in a sysfs tree other than the
    /// host's `/sys` (the simulated world's, which `CELLPATH_SYSFS_ROOT` names). The one test of
    /// it, for the remedies that add the simulator's own commands.
    public var isSimulated: Bool { !devicePath.hasPrefix(DeviceRoots().sysfs + "/") }
}
