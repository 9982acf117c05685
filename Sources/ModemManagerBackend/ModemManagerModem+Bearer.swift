import CGIO
import CModemManager
import CellpathCore
import GLibRuntime
import Modems

/// The bearer through ModemManager: its bearer objects read, one created and connected for
/// cellpath (`Modem.CreateBearer`, `Bearer.Connect`), disconnected and deleted again; PIN, enable
/// and disable; and the modem's property changes as indications.
extension ModemManagerModem {
    // MARK: Bearers

    /// The modem's bearer objects (references of the caller's: release them).
    func bearers(_ session: ModemManagerSession? = nil) async throws(ModemError) -> [UnsafeMutablePointer<MMBearer>] {
        let modem = self.modem
        let list = try await (session ?? self.session).call("list the bearers") { call in
            mm_modem_list_bearers(modem, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            let list = mm_modem_list_bearers_finish(modem, result, &error)
            if list == nil, error != nil { throw GLibError(taking: error) }
            return list
        }
        defer { g_list_free(list) }
        var bearers: [UnsafeMutablePointer<MMBearer>] = []
        var node = list
        while let current = node {
            bearers.append(current.pointee.data.assumingMemoryBound(to: MMBearer.self))
            node = current.pointee.next
        }
        return bearers
    }

    /// Runs `body` with the modem's bearers and releases them.
    private func withBearers<Value>(
        _ session: ModemManagerSession? = nil,
        _ body: @GLibActor ([UnsafeMutablePointer<MMBearer>]) async throws(ModemError) -> Value
    ) async throws(ModemError) -> Value {
        let bearers = try await self.bearers(session)
        defer { for bearer in bearers { g_object_unref(gpointer(bearer)) } }
        return try await body(bearers)
    }

    /// The bearer that carries data (`dataBearer`), else the first one, disconnected; else none.
    func bearer() async throws(ModemError) -> BearerStatus {
        try await withBearers { bearers throws(ModemError) in
            let kinds = bearers.map { bearer in
                BearerKind(
                    connected: mm_bearer_get_connected(bearer) != 0,
                    apnType: mm_bearer_peek_properties(bearer).map { mm_bearer_properties_get_apn_type($0).rawValue }
                        ?? MM_BEARER_APN_TYPE_NONE.rawValue)
            }
            if let index = Self.dataBearer(among: kinds) { return Self.status(bearers[index]) }
            guard let first = bearers.first(where: { mm_bearer_get_connected($0) == 0 }) else {
                return BearerStatus(state: .disconnected)
            }
            return Self.status(first)
        }
    }

    /// What choosing a bearer needs to know of one: connected or not, and the purposes of its
    /// APN (`MMBearerApnType` bits).
    struct BearerKind: Equatable {
        var connected: Bool
        var apnType: UInt32
    }

    /// Of a modem's bearers, the index of the connected one that carries Internet data: one whose
    /// APN types include "default", else one with none given (ModemManager treats the first such
    /// connection as the default one, and cellpath creates its bearers so). A bearer connected only
    /// for IMS, MMS, management or another purpose (a multiplexed modem's second PDN) is never
    /// taken for it: nil when no connected bearer is.
    nonisolated static func dataBearer(among bearers: [BearerKind]) -> Int? {
        let connected = bearers.indices.filter { bearers[$0].connected }
        return connected.first { bearers[$0].apnType & MM_BEARER_APN_TYPE_DEFAULT.rawValue != 0 }
            ?? connected.first { bearers[$0].apnType == MM_BEARER_APN_TYPE_NONE.rawValue }
    }

    func bearerState() async throws(ModemError) -> BearerState {
        try await withBearers { bearers throws(ModemError) in
            bearers.contains { mm_bearer_get_connected($0) != 0 } ? .connected : .disconnected
        }
    }

    func ipConfiguration() async throws(ModemError) -> BearerStatus {
        try await bearer()
    }

    /// A bearer object as cellpath describes it: state, APN, IPv4 and IPv6 configuration.
    static func status(_ bearer: UnsafeMutablePointer<MMBearer>) -> BearerStatus {
        var status = BearerStatus(state: mm_bearer_get_connected(bearer) != 0 ? .connected : .disconnected)
        if let properties = mm_bearer_peek_properties(bearer) {
            status.apn = text(mm_bearer_properties_get_apn(properties))
        }
        guard status.state == .connected else { return status }
        status.dataInterface = dataInterface(bearer)
        if let config = mm_bearer_get_ipv6_config(bearer) {
            defer { g_object_unref(gpointer(config)) }
            status.ipv6Address = text(mm_bearer_ip_config_get_address(config))
            let prefix = mm_bearer_ip_config_get_prefix(config)
            status.ipv6PrefixLength = prefix == 0 ? nil : Int(prefix)
            status.ipv6Gateway = text(mm_bearer_ip_config_get_gateway(config))
            status.dnsServers = texts(UnsafePointer(mm_bearer_ip_config_get_dns(config)))
        }
        guard let config = mm_bearer_get_ipv4_config(bearer) else { return status }
        defer { g_object_unref(gpointer(config)) }
        status.ipv4Address = text(mm_bearer_ip_config_get_address(config))
        let prefix = mm_bearer_ip_config_get_prefix(config)
        status.prefixLength = prefix == 0 ? nil : Int(prefix)
        status.gateway = text(mm_bearer_ip_config_get_gateway(config))
        status.dnsServers = texts(UnsafePointer(mm_bearer_ip_config_get_dns(config))) + status.dnsServers
        let mtu = mm_bearer_ip_config_get_mtu(config)
        status.mtu = mtu == 0 ? nil : Int(mtu)
        return status
    }

    /// The net device a connected bearer carries data on (its `Interface` property), copied at
    /// once: the string is the proxy's, valid only until the property changes on this thread.
    /// Nil while ModemManager names none (NULL or empty before the bearer is connected).
    static func dataInterface(_ bearer: UnsafeMutablePointer<MMBearer>) -> String? {
        text(mm_bearer_get_interface(bearer))
    }

    /// Creates a bearer with `settings` and connects it; returns its object's path and the net
    /// device it carries data on (a multiplexed link when ModemManager made one). A bearer that
    /// fails to connect is deleted again. Not given up when the task is cancelled.
    func connect(_ settings: BearerSettings) async throws(ModemError) -> BearerHandle {
        let properties = mm_bearer_properties_new()
        defer { g_object_unref(gpointer(properties)) }
        // An empty APN lets the network pick the subscription's default, as with the direct backends
        // (ModemManager refuses a 3GPP bearer without any APN).
        mm_bearer_properties_set_apn(properties, settings.apn ?? "")
        let family =
            switch settings.ipType {
            case .ipv4: MM_BEARER_IP_FAMILY_IPV4
            case .ipv6: MM_BEARER_IP_FAMILY_IPV6
            case .ipv4v6: MM_BEARER_IP_FAMILY_IPV4V6
            }
        mm_bearer_properties_set_ip_type(properties, family)
        let auth =
            switch settings.authentication {
            case .none: MM_BEARER_ALLOWED_AUTH_NONE
            case .pap: MM_BEARER_ALLOWED_AUTH_PAP
            case .chap: MM_BEARER_ALLOWED_AUTH_CHAP
            case .mschapv2: MM_BEARER_ALLOWED_AUTH_MSCHAPV2
            }
        mm_bearer_properties_set_allowed_auth(properties, auth)
        if let user = settings.user { mm_bearer_properties_set_user(properties, user) }
        if let password = settings.password { mm_bearer_properties_set_password(properties, password) }
        let modem = self.modem
        let bearer = try await session.call("create a bearer", followingTask: false) { call in
            mm_modem_create_bearer(modem, properties, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard let bearer = mm_modem_create_bearer_finish(modem, result, &error) else {
                throw GLibError(taking: error)
            }
            return bearer
        }
        defer { g_object_unref(gpointer(bearer)) }
        let path = String(cString: mm_bearer_get_path(bearer))
        session.logger.debug("\(port.name): bearer \(path) created")
        do {
            try await session.call("connect the bearer", followingTask: false) { call in
                mm_bearer_connect(bearer, call.cancellable, call.callback, call.userData)
            } finish: { result throws(GLibError) in
                var error: UnsafeMutablePointer<GError>?
                guard mm_bearer_connect_finish(bearer, result, &error) != 0 else { throw GLibError(taking: error) }
            }
        } catch {
            await delete(path, session.cleanup())
            throw error
        }
        // ModemManager may answer Connect before its proxy here hears of the new Interface (the
        // change is signalled later): the bearer is then read again, whole.
        var dataInterface = Self.dataInterface(bearer)
        if dataInterface == nil {
            dataInterface = try? await withBearers { bearers throws(ModemError) in
                bearers.first { String(cString: mm_bearer_get_path($0)) == path }.flatMap(Self.dataInterface)
            }
        }
        session.logger.debug("\(port.name): bearer \(path) carries data on \(dataInterface ?? "no interface it names")")
        return BearerHandle(bearerPath: path, dataInterface: dataInterface)
    }

    /// Disconnects the bearer that `handle` names and deletes it (cellpath created it); without
    /// a bearer path in the handle (nil: `--force`, or a record of a direct backend), disconnects
    /// every connected bearer and deletes none. True when a bearer was connected.
    func disconnect(_ handle: BearerHandle?) async throws(ModemError) -> Bool {
        let cleanup = session.cleanup()
        let path = handle?.bearerPath
        let wasConnected = try await withBearers(cleanup) { bearers throws(ModemError) in
            let targets = bearers.filter { bearer in
                path.map { String(cString: mm_bearer_get_path(bearer)) == $0 } ?? (mm_bearer_get_connected(bearer) != 0)
            }
            var wasConnected = false
            for bearer in targets where mm_bearer_get_connected(bearer) != 0 {
                wasConnected = true
                try await cleanup.call("disconnect the bearer") { call in
                    mm_bearer_disconnect(bearer, call.cancellable, call.callback, call.userData)
                } finish: { result throws(GLibError) in
                    var error: UnsafeMutablePointer<GError>?
                    guard mm_bearer_disconnect_finish(bearer, result, &error) != 0 else {
                        throw GLibError(taking: error)
                    }
                }
            }
            return wasConnected
        }
        if let path { await delete(path, cleanup) }
        return wasConnected
    }

    /// Deletes the bearer object at `path` (which also disconnects it); a failure is logged.
    private func delete(_ path: String, _ session: ModemManagerSession) async {
        let modem = self.modem
        do {
            try await session.call("delete the bearer") { call in
                mm_modem_delete_bearer(modem, path, call.cancellable, call.callback, call.userData)
            } finish: { result throws(GLibError) in
                var error: UnsafeMutablePointer<GError>?
                guard mm_modem_delete_bearer_finish(modem, result, &error) != 0 else { throw GLibError(taking: error) }
            }
            session.logger.debug("\(port.name): bearer \(path) deleted")
        } catch {
            session.logger.warning("\(error.message)")
        }
    }

    // MARK: Changes

    /// Sends PIN1 to the SIM and waits (within the session's time) until ModemManager no longer
    /// asks for it and has initialised the modem (which it does only once the SIM is unlocked:
    /// enabling it before fails or waits), then returns the SIM's state.
    func unlockSIM(pin: String) async throws(ModemError) -> SIMStatus {
        guard let sim = try await loadSIM() else { return try await simState() }
        defer { g_object_unref(gpointer(sim)) }
        try await session.call("unlock the SIM") { call in
            mm_sim_send_pin(sim, pin, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard mm_sim_send_pin_finish(sim, result, &error) != 0 else { throw GLibError(taking: error) }
        }
        func initialised() -> Bool {
            let state = mm_modem_get_state(modem)
            return state == MM_MODEM_STATE_FAILED
                || (mm_modem_get_unlock_required(modem) != MM_MODEM_LOCK_SIM_PIN
                    && state.rawValue >= MM_MODEM_STATE_DISABLED.rawValue)
        }
        while !initialised() && session.secondsLeft > 0.2 {
            do {
                try await Task.sleep(for: .milliseconds(100))
            } catch {
                throw ModemError(
                    .transport, .cancelled, operation: session.describe("unlock the SIM"), reason: "cancelled")
            }
        }
        return try await simState()
    }

    /// Enables (radio on, ModemManager then registers) or disables the modem.
    func setRadio(_ state: RadioState) async throws(ModemError) {
        let modem = self.modem
        let session = Task.isCancelled || self.session.secondsLeft <= 0 ? self.session.cleanup() : self.session
        if state == .on {
            try await session.call("enable the modem") { call in
                mm_modem_enable(modem, call.cancellable, call.callback, call.userData)
            } finish: { result throws(GLibError) in
                var error: UnsafeMutablePointer<GError>?
                guard mm_modem_enable_finish(modem, result, &error) != 0 else { throw GLibError(taking: error) }
            }
        } else {
            try await session.call("disable the modem") { call in
                mm_modem_disable(modem, call.cancellable, call.callback, call.userData)
            } finish: { result throws(GLibError) in
                var error: UnsafeMutablePointer<GError>?
                guard mm_modem_disable_finish(modem, result, &error) != 0 else { throw GLibError(taking: error) }
            }
        }
    }

    /// ModemManager attaches when it connects: nothing to ask.
    func attachPacketService() async throws(ModemError) {}

    /// ModemManager holds no client IDs for cellpath.
    func releaseCheckClients() async {}

    /// Property changes reach every client of the bus.
    func followBearer(_ handle: BearerHandle?) async -> BearerFollowing { .everyChange }

    // MARK: Indications

    /// Follows the modem's property changes (its state, its registration and packet service):
    /// each change is an indication; the modem leaving the connected state is the bearer's end.
    func indications() async throws(ModemError) -> AsyncStream<ModemIndication> {
        if let indicationSink { return indicationSink.stream }
        let sink = IndicationSink()
        indicationSink = sink
        let watch = PropertyWatch(
            sink: sink, object: object, connected: mm_modem_get_state(modem) == MM_MODEM_STATE_CONNECTED)
        let instances: [gpointer] = [gpointer(modem)] + (modem3gpp.map { [gpointer($0)] } ?? [])
        for instance in instances {
            let handler = cmm_connect_notify(
                instance,
                { _, property, data in
                    guard let property, let data else { return }
                    let name = String(cString: g_param_spec_get_name(property))
                    Unmanaged<PropertyWatch>.fromOpaque(data).takeUnretainedValue().changed(name)
                }, Unmanaged.passRetained(watch).toOpaque(),
                { data, _ in
                    Unmanaged<PropertyWatch>.fromOpaque(data!).release()
                })
            notifyHandlers.append((instance, handler))
        }
        return sink.stream
    }
}

/// Turns the "notify" signals of a modem's objects into indications. Loop thread only.
final class PropertyWatch: @unchecked Sendable {
    let sink: IndicationSink
    let object: UnsafeMutablePointer<MMObject>
    /// Whether the modem was connected at the last change.
    var connected: Bool

    init(sink: IndicationSink, object: UnsafeMutablePointer<MMObject>, connected: Bool) {
        self.sink = sink
        self.object = object
        self.connected = connected
    }

    /// A property named `name` changed.
    func changed(_ name: String) {
        guard let modem = mm_object_peek_modem(object) else { return }
        switch name {
        case "state":
            let now = mm_modem_get_state(modem) == MM_MODEM_STATE_CONNECTED
            defer { connected = now }
            if now && !connected { sink.yield(.bearer(.connected, reason: nil)); return }
            if !now && connected { sink.yield(.bearer(.disconnected, reason: nil)); return }
            sink.yield(.registration(ModemManagerModem.registration(object)))
        case "registration-state", "operator-code", "access-technologies":
            sink.yield(.registration(ModemManagerModem.registration(object)))
        case "packet-service-state":
            guard let modem3gpp = mm_object_peek_modem_3gpp(object) else { return }
            let state: PacketServiceState =
                switch mm_modem_3gpp_get_packet_service_state(modem3gpp) {
                case MM_MODEM_3GPP_PACKET_SERVICE_STATE_ATTACHED: .attached
                case MM_MODEM_3GPP_PACKET_SERVICE_STATE_DETACHED: .detached
                default: .unknown
                }
            sink.yield(.packetService(state))
        default:
            break
        }
    }
}
