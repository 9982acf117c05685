import Glibc

/// A Linux capability that one of cellpath's commands may need, read from this process's
/// effective set (`CapEff` of /proc/self/status).
public enum Capability: Int, Sendable, CaseIterable {
    /// Links, addresses, routes, rules and the interface's sysctls.
    case netAdmin = 12
    /// Raw and packet sockets.
    case netRaw = 13

    /// Its name as the kernel's headers and systemd's `AmbientCapabilities=` spell it.
    public var name: String {
        switch self {
        case .netAdmin: "CAP_NET_ADMIN"
        case .netRaw: "CAP_NET_RAW"
        }
    }

    /// Its bit in a capability set.
    public var mask: UInt64 { 1 << UInt64(rawValue) }

    /// Whether this process holds it in its effective set.
    public var isEffective: Bool { Capability.effectiveSet.map { $0 & mask != 0 } ?? false }

    /// How to grant `capabilities`: the line of a systemd unit, or file capabilities on the
    /// running executable for the `cellpath` group (docs/operations.md).
    public static func howToGrant(_ capabilities: [Capability]) -> String {
        let names = capabilities.map(\.name).joined(separator: " ")
        let setcap = capabilities.map { $0.name.lowercased() }.joined(separator: ",") + "+ep"
        return "grant it in its systemd unit: AmbientCapabilities=\(names); or to the cellpath group: "
            + "sudo setcap \(setcap) \(FileSystem.runningExecutable ?? "cellpath-modem") (docs/operations.md)"
    }

    /// This process's effective capability set, nil when /proc/self/status cannot be read.
    public static var effectiveSet: UInt64? {
        guard let status = FileSystem.readText("/proc/self/status"),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") })
        else { return nil }
        return UInt64(line.dropFirst("CapEff:".count).filter { !$0.isWhitespace }, radix: 16)
    }
}
