import CShims
import CellpathCore
import Glibc

/// A user and group that files are opened as.
public struct FileIdentity: Sendable, Equatable {
    public var uid: uid_t
    public var gid: gid_t

    public init(uid: uid_t, gid: gid_t) {
        self.uid = uid
        self.gid = gid
    }

    /// The user's home directory in the password database, or nil.
    public var homeDirectory: String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let directory = entry.pw_dir
        else { return nil }
        return String(cString: directory)
    }

    /// The identity this process opens files as (its effective user and group).
    public static var effective: FileIdentity { FileIdentity(uid: geteuid(), gid: getegid()) }

    /// Runs `body` with the calling thread's filesystem identity switched to this one
    /// (setfsuid/setfsgid), then switches back; files `body` opens or creates are checked
    /// against, and owned by, this identity. `body` must stay on this thread (synchronous).
    public func perform<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        guard self != .effective else { return try body() }
        let previousGID = cshims_setfsgid(gid)
        let previousUID = cshims_setfsuid(uid)
        defer {
            _ = cshims_setfsuid(UInt32(bitPattern: previousUID))
            _ = cshims_setfsgid(UInt32(bitPattern: previousGID))
        }
        return try body()
    }
}

/// Whether this process holds privileges that the user who started it does not, and who that
/// user is. Such a process must not let that user's environment choose what it reads or writes.
public enum ProcessPrivilege: Sendable, Equatable {
    /// It runs with its caller's own rights.
    case ordinary
    /// The kernel raised it over its caller at exec (set-user-ID, set-group-ID or file
    /// capabilities: `AT_SECURE`); `caller` is its real user and group.
    case raisedByExecutable(caller: FileIdentity)
    /// Root, started through sudo by another user (`SUDO_UID`, `SUDO_GID`).
    case rootUnderSudo(caller: FileIdentity)

    /// This process's privilege; `environment` gives sudo's variables.
    public static func current(environment: [String: String]) -> ProcessPrivilege {
        if cshims_at_secure() != 0 { return .raisedByExecutable(caller: FileIdentity(uid: getuid(), gid: getgid())) }
        if getuid() == 0, let uid = environment["SUDO_UID"].flatMap(uid_t.init), uid != 0 {
            return .rootUnderSudo(
                caller: FileIdentity(uid: uid, gid: environment["SUDO_GID"].flatMap(gid_t.init) ?? uid))
        }
        return .ordinary
    }

    /// Whose rights the files named on the command line are opened with: the caller's when
    /// privileged, else nil (this process's own).
    public var caller: FileIdentity? {
        switch self {
        case .ordinary: nil
        case .raisedByExecutable(let caller), .rootUnderSudo(let caller): caller
        }
    }

    /// `environment` without the overrides this process must not follow, and their names. When
    /// the executable raised the privileges, every path and credential override goes; as root
    /// under sudo, a path override is kept only when the path it names is one only root can
    /// change (`FileSystem.onlyRootCanChange`), so that the simulator's worlds (under
    /// /run/cellpath-sim) keep working and a tree the caller could forge does not.
    public func screen(_ environment: [String: String]) -> (environment: [String: String], ignored: [String]) {
        switch self {
        case .ordinary:
            return (environment, [])
        case .raisedByExecutable:
            return ProcessEnvironment.screened(environment, keepCredentials: false) { _, _ in false }
        case .rootUnderSudo:
            return ProcessEnvironment.screened(environment, keepCredentials: true) { _, value in
                value.isEmpty || ProcessEnvironment.namedPath(value).map { FileSystem.onlyRootCanChange($0) } ?? false
            }
        }
    }
}
