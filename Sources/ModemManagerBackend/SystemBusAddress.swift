import CellpathCore
import Glibc

/// The system bus's D-Bus address, as GLib reads it: `DBUS_SYSTEM_BUS_ADDRESS`, else the
/// system's socket.
struct SystemBusAddress: Equatable {
    /// GLib's system bus when `DBUS_SYSTEM_BUS_ADDRESS` is not set (Debian's build).
    static let systemDefault = "unix:path=/var/run/dbus/system_bus_socket"

    /// The address text (`transport:key=value,…`, alternatives separated by `;`).
    let text: String

    init(environment: [String: String]) {
        let named = environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? ""
        text = named.isEmpty ? Self.systemDefault : named
    }

    init(_ text: String) { self.text = text }

    /// The socket file of a plain `unix:path=…` address (one alternative, its path not
    /// escaped), else nil: the address of other forms (abstract sockets, TCP, several
    /// alternatives) is left to GLib.
    var socketPath: String? {
        guard !text.contains(";"), text.hasPrefix("unix:") else { return nil }
        let pairs = text.dropFirst("unix:".count).split(separator: ",")
        let paths = pairs.filter { $0.hasPrefix("path=") }.map { String($0.dropFirst("path=".count)) }
        guard paths.count == 1, let path = paths.first, path.hasPrefix("/"), !path.contains("%") else { return nil }
        return path
    }

    /// The socket file of a plain `unix:path=…` address that does not exist: no bus can be
    /// reached there, and asking GLib would only load its D-Bus machinery to learn that.
    var missingSocket: String? {
        guard let socketPath else { return nil }
        var info = stat()
        return lstat(socketPath, &info) == 0 ? nil : socketPath
    }
}
