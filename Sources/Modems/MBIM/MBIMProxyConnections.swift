import CGIO
import CMBIM
import GLibRuntime

/// The open mbim-proxy connections of this process, kept for the next session on the same port
/// instead of closed.
///
/// libmbim (1.28 and later, at least to 1.35) closes a proxied device's socket twice: its
/// GIOChannel's shutdown closes the descriptor, then the GSocketConnection's release closes the
/// same number again. Between the two, another thread of this process (another modem's lane of
/// `-m all`, a netlink socket, a record being written) can be given that number and lose its
/// descriptor. So a proxied device is never closed or released while the process runs: a
/// session's end puts it back here, the next session on that port takes it, and the process's
/// exit closes its socket once. So is a device whose open through the proxy failed half-way
/// (libmbim leaves its socket connected, and cannot open it again). A device the proxy hung up
/// on (the modem went away) is dropped: libmbim has closed it already, so its release closes
/// nothing (that close, libmbim's own, is still a double one; cellpath cannot avoid it).
@GLibActor
enum MBIMProxyConnections {
    /// One kept connection, and whether libmbim reported its port removed.
    final class Connection {
        let device: UnsafeMutablePointer<MbimDevice>
        fileprivate(set) var removed = false
        fileprivate var handler: gulong = 0

        init(device: UnsafeMutablePointer<MbimDevice>) { self.device = device }
    }

    /// Idle connections by control-port path.
    private static var idle: [String: [Connection]] = [:]

    /// An idle connection to `devicePath` that is still open, if there is one.
    static func take(_ devicePath: String) -> Connection? {
        while let connection = idle[devicePath]?.popLast() {
            if !connection.removed && mbim_device_is_open(connection.device) != 0 { return connection }
            drop(connection)
        }
        return nil
    }

    /// Follows a newly opened proxied device, so that a hang-up while it is idle is known.
    static func adopt(_ device: UnsafeMutablePointer<MbimDevice>) -> Connection {
        let connection = Connection(device: device)
        connection.handler = cmbim_device_connect_removed(
            device,
            { _, data in
                Unmanaged<Connection>.fromOpaque(data!).takeUnretainedValue().removed = true
            }, Unmanaged.passRetained(connection).toOpaque(),
            { data, _ in
                Unmanaged<Connection>.fromOpaque(data!).release()
            })
        return connection
    }

    /// Keeps `connection` for the next session on `devicePath` while it is open; else drops it.
    static func putBack(_ connection: Connection, devicePath: String) {
        guard !connection.removed && mbim_device_is_open(connection.device) != 0 else { return drop(connection) }
        idle[devicePath, default: []].append(connection)
    }

    /// Releases a connection libmbim has closed already (after a hang-up): nothing is closed
    /// twice. One it has not (an open that failed half-way) is kept until the proxy hangs up on
    /// it; the abandoned ones it has hung up on since are released.
    private static func drop(_ connection: Connection) {
        abandoned.removeAll { abandonedConnection in
            guard abandonedConnection.removed else { return false }
            release(abandonedConnection)
            return true
        }
        guard connection.removed else { return abandoned.append(connection) }
        release(connection)
    }

    /// Releases a connection whose socket libmbim has closed.
    private static func release(_ connection: Connection) {
        g_signal_handler_disconnect(gpointer(connection.device), connection.handler)
        g_object_unref(gpointer(connection.device))
    }

    /// Connections neither reusable nor safe to close; the proxy's hang-up or the process's exit
    /// closes them.
    private static var abandoned: [Connection] = []
}
