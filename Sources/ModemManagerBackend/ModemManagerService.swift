import CGIO
import CModemManager
import CellpathCore
import GLibRuntime
import ModemDiscovery
import Modems

/// ModemManager on the system bus (the one `DBUS_SYSTEM_BUS_ADDRESS` names, else the system's),
/// through libmm-glib: one connection and one object manager per process, made on first use
/// and kept, so that its proxies follow ModemManager's objects. Runs on `GLibActor`, whose loop
/// thread dispatches the bus's messages and property changes.
@GLibActor
public enum ModemManagerService {
    /// ModemManager's well-known name on the bus.
    public static let busName = "org.freedesktop.ModemManager1"

    private static var connection: OpaquePointer?
    private static var manager: UnsafeMutablePointer<MMManager>?
    /// Whether ModemManager ran when `isRunning` first asked.
    private static var running: Bool?

    /// Whether ModemManager runs: `org.freedesktop.ModemManager1` has an owner on the system bus
    /// (asked once per process). No bus, or no answer within `timeout`, is no ModemManager; a
    /// bus whose socket file is missing is not asked.
    public static func isRunning(timeout: Duration = .seconds(2), logger: Logger) async -> Bool {
        if let running { return running }
        if let socket = SystemBusAddress(environment: ProcessEnvironment.current()).missingSocket {
            logger.debug("ModemManager does not run: no system bus (\(socket) is missing)")
            running = false
            return false
        }
        let session = ModemManagerSession(modem: "", timeout: timeout, logger: logger)
        let found: Bool
        do {
            found = try await hasOwner(session)
        } catch {
            logger.debug("no ModemManager: \(error.message)")
            found = false
        }
        running = found
        logger.debug(found ? "ModemManager runs on the system bus" : "ModemManager does not run on the system bus")
        return found
    }

    /// Opens the modem that ModemManager manages with `port` among its ports. ModemManager not
    /// on the bus, or not managing that modem, is an `.unavailable` transport error (69).
    public static func open(
        _ port: ControlPort, access: ModemAccess, logger: Logger
    ) async throws(ModemError) -> any ModemBackend {
        let session = ModemManagerSession(modem: port.name, timeout: access.timeout, logger: logger)
        let manager = try await self.manager(session)
        guard let object = modemObject(manager, port: port.name) else {
            throw ModemError(
                .transport, .unavailable, operation: "find \(port.name) in ModemManager",
                reason: "ModemManager does not manage a modem with port \(port.name) (yet)",
                hint: "list ModemManager's modems with mmcli -L; a modem it just found takes a few seconds; "
                    + "or open the port directly with --backend \(port.protocol.rawValue)")
        }
        let modem = ModemManagerModem(port: port, object: object, session: session)
        logger.debug("\(port.name): ModemManager's \(modem.path)")
        return modem
    }

    /// The system bus, connecting on first use.
    private static func bus(_ session: ModemManagerSession) async throws(ModemError) -> OpaquePointer {
        if let connection { return connection }
        let made = try await session.call("connect to the system bus") { call in
            g_bus_get(G_BUS_TYPE_SYSTEM, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard let connection = g_bus_get_finish(result, &error) else { throw GLibError(taking: error) }
            return connection
        }
        if let connection {
            g_object_unref(gpointer(made))
            return connection
        }
        connection = made
        return made
    }

    /// Whether ModemManager's name has an owner (`org.freedesktop.DBus.NameHasOwner`).
    private static func hasOwner(_ session: ModemManagerSession) async throws(ModemError) -> Bool {
        let bus = try await self.bus(session)
        var name: OpaquePointer? = g_variant_new_string(busName)
        let parameters = g_variant_new_tuple(&name, 1)
        return try await session.call("ask the system bus for ModemManager") { call in
            g_dbus_connection_call(
                bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                parameters, nil, G_DBUS_CALL_FLAGS_NONE, -1, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard let reply = g_dbus_connection_call_finish(bus, result, &error) else { throw GLibError(taking: error) }
            defer { g_variant_unref(reply) }
            let owned = g_variant_get_child_value(reply, 0)
            defer { g_variant_unref(owned) }
            return g_variant_get_boolean(owned) != 0
        }
    }

    /// The object manager, made on first use once ModemManager's name has an owner. It is made
    /// synchronously on the loop thread (one GetManagedObjects round trip): made asynchronously,
    /// GIO initialises it on a worker thread, whose context would then receive the property
    /// changes, and no loop runs that one.
    static func manager(_ modemSession: ModemManagerSession) async throws(ModemError) -> UnsafeMutablePointer<MMManager>
    {
        if let manager { return manager }
        let session = ModemManagerSession(
            modem: "", timeout: .seconds(max(1, Int(modemSession.secondsLeft.rounded(.up)))),
            logger: modemSession.logger)
        let owned: Bool
        do {
            owned = try await hasOwner(session)
        } catch {
            var unreachable = error
            unreachable.hint =
                "ModemManager is reached on the system bus (DBUS_SYSTEM_BUS_ADDRESS names another): "
                + "start the bus and ModemManager, or use --backend mbim|qmi"
            throw unreachable
        }
        guard owned else {
            throw ModemError(
                .transport, .unavailable, operation: "reach ModemManager",
                reason: "\(busName) has no owner on the system bus (ModemManager does not run)",
                hint: "start ModemManager (systemctl start ModemManager), or use --backend mbim|qmi")
        }
        if let manager { return manager }
        var error: UnsafeMutablePointer<GError>?
        guard
            let made = mm_manager_new_sync(
                try await bus(session), G_DBUS_OBJECT_MANAGER_CLIENT_FLAGS_DO_NOT_AUTO_START, nil, &error)
        else {
            throw ModemManagerErrors.error("reach ModemManager", GLibError(taking: error))
        }
        manager = made
        return made
    }

    /// The modem object (a reference of the caller's) with a port named `name`.
    private static func modemObject(
        _ manager: UnsafeMutablePointer<MMManager>, port name: String
    ) -> UnsafeMutablePointer<MMObject>? {
        let objects = g_dbus_object_manager_get_objects(cmm_manager_object_manager(manager))
        defer { g_list_free_full(objects) { g_object_unref($0) } }
        var node = objects
        while let current = node {
            node = current.pointee.next
            guard let object = cmm_object(current.pointee.data), let modem = mm_object_peek_modem(object) else {
                continue
            }
            if ModemManagerModem.portNames(modem).contains(name) {
                g_object_ref(gpointer(object))
                return object
            }
        }
        return nil
    }
}
