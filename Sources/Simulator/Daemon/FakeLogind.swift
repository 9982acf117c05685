import CGIO
import CellpathCore
import GLibRuntime
import Glibc
import Synchronization
import SystemSupport

/// systemd-logind's sleep interface on the world's private bus, as ModemManager's sleep monitor
/// uses it: `org.freedesktop.login1` at `/org/freedesktop/login1` answers
/// `Manager.Inhibit(what, who, why, mode)` with a file descriptor (the inhibitor lasts until its
/// holder closes it) and emits `Manager.PrepareForSleep(b)`. Before sleeping it waits, as logind
/// does, for the delay inhibitors to be released (at most `InhibitDelayMaxSec`, 5 s). Thread-safe.
final class FakeLogind: Sendable {
    static let name = "org.freedesktop.login1"
    static let path = "/org/freedesktop/login1"
    static let interface = "org.freedesktop.login1.Manager"
    /// logind's default `InhibitDelayMaxSec`.
    static let inhibitDelayMax = 5.0

    private static let introspection = """
        <node><interface name="\(interface)">
        <method name="Inhibit"><arg name="what" type="s" direction="in"/><arg name="who" type="s" direction="in"/>
        <arg name="why" type="s" direction="in"/><arg name="mode" type="s" direction="in"/>
        <arg name="fd" type="h" direction="out"/></method>
        <signal name="PrepareForSleep"><arg name="start" type="b"/></signal>
        </interface></node>
        """

    /// One taken inhibitor: logind's end of the pipe whose other end the holder got.
    struct Inhibitor: Sendable {
        var fd: Int32
        var who: String
        var mode: String
    }

    private struct Connection: @unchecked Sendable { let pointer: OpaquePointer }
    private let connection: Mutex<Connection?> = Mutex(nil)
    private let inhibitors = Mutex<[Inhibitor]>([])
    private let log: @Sendable (String) -> Void

    /// Connects to the bus at `address`, exports the interface and takes the name.
    init(busAddress address: String, log: @escaping @Sendable (String) -> Void) throws {
        self.log = log
        let outcome = WaitableValue<(done: Bool, failure: String?)>((false, nil))
        GLibLoop.shared.perform { [self] in
            let failure = connect(address)
            outcome.update { $0 = (true, failure) }
        }
        if let failure = outcome.wait(until: \.done).failure {
            stop()
            throw CellpathError(.unavailable, "fake logind: \(failure)")
        }
    }

    /// Emits PrepareForSleep(`sleeping`); before a sleep, waits until the delay inhibitors are
    /// released (ModemManager drops its own once it has removed its modems) or 5 s have passed.
    func prepareForSleep(_ sleeping: Bool) {
        guard let connection = connection.withLock({ $0 }) else { return }
        var child: OpaquePointer? = g_variant_new_boolean(sleeping ? 1 : 0)
        var error: UnsafeMutablePointer<GError>?
        g_dbus_connection_emit_signal(
            connection.pointer, nil, Self.path, Self.interface, "PrepareForSleep",
            g_variant_new_tuple(&child, 1), &error)
        g_dbus_connection_flush_sync(connection.pointer, nil, nil)
        if let error {
            log("fake logind: PrepareForSleep: \(String(cString: error.pointee.message))")
            g_error_free(error)
        }
        guard sleeping else { return }
        let deadline = MonotonicClock.now + Self.inhibitDelayMax
        while MonotonicClock.now < deadline, releaseClosedInhibitors().contains(where: { $0.mode == "delay" }) {
            usleep(20_000)
        }
    }

    /// The inhibitors still held.
    var held: [Inhibitor] { releaseClosedInhibitors() }

    /// Leaves the bus and closes every inhibitor's pipe.
    func stop() {
        if let connection = connection.withLock({ $0.take() }) {
            g_dbus_connection_close_sync(connection.pointer, nil, nil)
            g_object_unref(UnsafeMutableRawPointer(connection.pointer))
        }
        inhibitors.withLock { list in
            for inhibitor in list { close(inhibitor.fd) }
            list = []
        }
    }

    /// Forgets the inhibitors whose holders closed their end; returns those left.
    private func releaseClosedInhibitors() -> [Inhibitor] {
        inhibitors.withLock { list in
            list.removeAll { inhibitor in
                var p = pollfd(fd: inhibitor.fd, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 0) > 0, p.revents & Int16(POLLHUP) != 0 else { return false }
                close(inhibitor.fd)
                log("fake logind: \(inhibitor.who) released its \(inhibitor.mode) inhibitor")
                return true
            }
            return list
        }
    }

    /// On the GLib loop thread: the connection, the object and the name; nil or what failed.
    private func connect(_ address: String) -> String? {
        var error: UnsafeMutablePointer<GError>?
        func failure(_ what: String) -> String {
            defer { if error != nil { g_error_free(error) } }
            return "\(what): \(error.map { String(cString: $0.pointee.message) } ?? "failed")"
        }
        let flags = GDBusConnectionFlags(
            rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let bus = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
            return failure("cannot connect to \(address)")
        }
        connection.withLock { $0 = Connection(pointer: bus) }
        guard let node = g_dbus_node_info_new_for_xml(Self.introspection, &error) else {
            return failure("introspection")
        }
        defer { g_dbus_node_info_unref(node) }
        var vtable = GDBusInterfaceVTable()
        vtable.method_call = { _, _, _, _, method, parameters, invocation, data in
            guard let data, let method, let invocation else { return }
            let logind = Unmanaged<FakeLogind>.fromOpaque(data).takeUnretainedValue()
            logind.methodCall(String(cString: method), parameters, invocation)
        }
        let registered = withUnsafePointer(to: &vtable) { table in
            g_dbus_connection_register_object(
                bus, Self.path, node.pointee.interfaces[0], table,
                Unmanaged.passRetained(self).toOpaque(),
                { data in
                    if let data { Unmanaged<FakeLogind>.fromOpaque(data).release() }
                }, &error)
        }
        guard registered != 0 else { return failure("cannot export \(Self.path)") }
        var name: [OpaquePointer?] = [g_variant_new_string(Self.name), g_variant_new_uint32(4)]  // DO_NOT_QUEUE
        let reply = g_dbus_connection_call_sync(
            bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
            "org.freedesktop.DBus", "RequestName", g_variant_new_tuple(&name, 2),
            nil, G_DBUS_CALL_FLAGS_NONE, 5000, nil, &error)
        guard let reply else { return failure("cannot own \(Self.name)") }
        var result: UInt32 = 0
        if let value = g_variant_get_child_value(reply, 0) {
            result = g_variant_get_uint32(value)
            g_variant_unref(value)
        }
        g_variant_unref(reply)
        return result == 1 ? nil : "\(Self.name) is owned by another connection"  // 1: primary owner
    }

    /// On the GLib loop thread: answers Inhibit with the write end of a fresh pipe.
    private func methodCall(_ method: String, _ parameters: OpaquePointer?, _ invocation: OpaquePointer) {
        guard method == "Inhibit", let parameters else {
            g_dbus_method_invocation_return_dbus_error(
                invocation, "org.freedesktop.DBus.Error.UnknownMethod",
                "unknown method")
            return
        }
        func argument(_ i: Int) -> String {
            guard let value = g_variant_get_child_value(parameters, gsize(i)) else { return "" }
            defer { g_variant_unref(value) }
            return String(cString: g_variant_get_string(value, nil))
        }
        let (what, who, mode) = (argument(0), argument(1), argument(3))
        guard let pipe = try? FileDescriptor.pipe(nonBlocking: false) else {
            g_dbus_method_invocation_return_dbus_error(invocation, "org.freedesktop.DBus.Error.Failed", "pipe failed")
            return
        }
        let ends = [pipe.read.release(), pipe.write.release()]
        let list = g_unix_fd_list_new()
        _ = g_unix_fd_list_append(list, ends[1], nil)  // the list keeps its own copy
        close(ends[1])
        var handle: OpaquePointer? = g_variant_new_handle(0)
        g_dbus_method_invocation_return_value_with_unix_fd_list(invocation, g_variant_new_tuple(&handle, 1), list)
        g_object_unref(UnsafeMutableRawPointer(list))
        inhibitors.withLock { $0.append(Inhibitor(fd: ends[0], who: who, mode: mode)) }
        log("fake logind: \(who) took a \(mode) inhibitor for \(what)")
    }
}
