import CGIO
import CMBIM
import CellpathCore
import GLibRuntime
import ModemDiscovery

/// An MBIM modem through libmbim-glib: Basic Connect queries on one open MbimDevice.
@GLibActor
final class MBIMModem: ModemBackend {
    nonisolated let port: ControlPort
    nonisolated var backendName: ModemBackendName { .mbim }
    private(set) var session: ModemSession
    let device: UnsafeMutablePointer<MbimDevice>
    private var isOpen = true
    /// The "device-removed" handler, which aborts the calls in flight.
    private var removedHandler: gulong = 0
    /// The "device-indicate-status" handler, once indications are followed.
    var indicationHandler: gulong = 0
    /// Where indications go, once followed; finished on close.
    var indicationSink: IndicationSink?
    /// The mbim-proxy connection this session uses, kept open for the next one when it ends.
    private var proxyConnection: MBIMProxyConnections.Connection?

    private init(session: ModemSession, device: UnsafeMutablePointer<MbimDevice>) {
        port = session.port
        self.session = session
        self.device = device
    }

    /// Opens a session: on a connection to mbim-proxy this process opened before when `proxy`
    /// and one is idle, else on a new MbimDevice opened (through mbim-proxy when `proxy`), which
    /// sends MBIM OPEN.
    static func open(_ session: ModemSession, proxy: Bool) async throws(ModemError) -> MBIMModem {
        if proxy, let connection = MBIMProxyConnections.take(session.port.devicePath) {
            let modem = MBIMModem(session: session, device: connection.device)
            modem.proxyConnection = connection
            modem.followRemoval()
            session.logger.debug("\(session.port.name): MBIM session open through mbim-proxy (connection reused)")
            return modem
        }
        let file = g_file_new_for_path(session.port.devicePath)
        defer { g_object_unref(gpointer(file)) }
        let device = try await session.call("open") { call in
            mbim_device_new(file, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard let device = mbim_device_new_finish(result, &error) else { throw GLibError(taking: error) }
            return device
        }
        let modem = MBIMModem(session: session, device: device)
        modem.followRemoval()
        // Followed before the open: one that fails half-way leaves a socket, never to be closed.
        if proxy { modem.proxyConnection = MBIMProxyConnections.adopt(device) }
        let flags = proxy ? MBIM_DEVICE_OPEN_FLAGS_PROXY : MBIM_DEVICE_OPEN_FLAGS_NONE
        do {
            try await session.call(proxy ? "open through mbim-proxy" : "open") { call in
                mbim_device_open_full(
                    device, flags, session.libraryTimeout, call.cancellable, call.callback, call.userData)
            } finish: { result throws(GLibError) in
                var error: UnsafeMutablePointer<GError>?
                guard mbim_device_open_full_finish(device, result, &error) != 0 else { throw GLibError(taking: error) }
            }
        } catch {
            await modem.close()
            throw error
        }
        session.logger.debug("\(session.port.name): MBIM session open\(proxy ? " through mbim-proxy" : "")")
        return modem
    }

    /// Fails this session's calls in flight when the port hangs up: libmbim signals it, but does
    /// not fail them.
    private func followRemoval() {
        removedHandler = cmbim_device_connect_removed(
            device,
            { _, data in
                Unmanaged<GLibCallGroup>.fromOpaque(data!).takeUnretainedValue().abort()
            }, Unmanaged.passRetained(session.calls).toOpaque(),
            { data, _ in
                Unmanaged<GLibCallGroup>.fromOpaque(data!).release()
            })
    }

    func renewTimeLimit() async { session = session.renewed() }

    func close() async {
        guard isOpen else { return }
        isOpen = false
        g_signal_handler_disconnect(gpointer(device), removedHandler)
        if indicationHandler != 0 { g_signal_handler_disconnect(gpointer(device), indicationHandler) }
        indicationSink?.finish()
        if let proxyConnection {
            // Not closed: see MBIMProxyConnections (libmbim closes a proxied socket twice).
            MBIMProxyConnections.putBack(proxyConnection, devicePath: port.devicePath)
            return
        }
        var error: UnsafeMutablePointer<GError>?
        if mbim_device_close_force(device, &error) == 0 { g_error_free(error) }
        g_object_unref(gpointer(device))
    }

    // MARK: Reads

    func identity() async throws(ModemError) -> ModemIdentity {
        let operation = "query the device capabilities"
        let response = try await command(operation, mbim_message_device_caps_query_new(nil))!
        var deviceID: UnsafeMutablePointer<gchar>?, firmware: UnsafeMutablePointer<gchar>?,
            hardware: UnsafeMutablePointer<gchar>?
        try parse(operation) { error in
            mbim_message_device_caps_response_parse(
                response.message, nil, nil, nil, nil, nil, nil, nil, nil, nil,
                &deviceID, &firmware, &hardware, &error)
        }
        return ModemIdentity(model: taken(hardware), firmware: taken(firmware), imei: taken(deviceID))
    }

    func sim() async throws(ModemError) -> SIMStatus {
        let operation = "query the subscriber ready status"
        let response = try await command(operation, mbim_message_subscriber_ready_status_query_new(nil))!
        var readyState = MBIM_SUBSCRIBER_READY_STATE_NOT_INITIALIZED
        var imsi: UnsafeMutablePointer<gchar>?, iccid: UnsafeMutablePointer<gchar>?
        var count: UInt32 = 0
        var numbers: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        // MBIMEx v3 has a flags field after the ready state.
        let v3 = extensionsVersion >= 3
        try parse(operation) { error in
            v3
                ? mbim_message_ms_basic_connect_v3_subscriber_ready_status_response_parse(
                    response.message, &readyState, nil, &imsi, &iccid, nil, &count, &numbers, &error)
                : mbim_message_subscriber_ready_status_response_parse(
                    response.message, &readyState, &imsi, &iccid, nil, &count, &numbers, &error)
        }
        var sim = SIMStatus(state: .notReady, iccid: taken(iccid), imsi: taken(imsi), msisdns: takenList(numbers))
        switch readyState {
        case MBIM_SUBSCRIBER_READY_STATE_INITIALIZED: sim.state = .ready
        case MBIM_SUBSCRIBER_READY_STATE_SIM_NOT_INSERTED: sim.state = .absent
        case MBIM_SUBSCRIBER_READY_STATE_NO_ESIM_PROFILE: sim.state = .esimWithoutProfile
        case MBIM_SUBSCRIBER_READY_STATE_DEVICE_LOCKED: sim.state = .pinRequired
        case MBIM_SUBSCRIBER_READY_STATE_BAD_SIM, MBIM_SUBSCRIBER_READY_STATE_FAILURE: sim.state = .failed
        default: sim.state = .notReady
        }
        // An initialized SIM is unlocked: only another state needs the PIN state.
        guard ![.absent, .esimWithoutProfile, .ready].contains(sim.state) else { return sim }
        let pinOperation = "query the PIN state"
        guard
            let pin = try await command(
                pinOperation, mbim_message_pin_query_new(nil),
                states: [
                    MBIM_STATUS_ERROR_SIM_NOT_INSERTED, MBIM_STATUS_ERROR_NOT_INITIALIZED,
                    MBIM_STATUS_ERROR_BAD_SIM
                ])
        else { return sim }
        var type = MBIM_PIN_TYPE_UNKNOWN, state = MBIM_PIN_STATE_UNLOCKED
        var attempts: UInt32 = 0
        try parse(pinOperation) { error in
            mbim_message_pin_response_parse(pin.message, &type, &state, &attempts, &error)
        }
        if state == MBIM_PIN_STATE_LOCKED {
            switch type {
            case MBIM_PIN_TYPE_PIN1:
                sim.state = .pinRequired
                sim.pinRetries = Int(attempts)
            case MBIM_PIN_TYPE_PUK1: sim.state = .pukRequired
            default: break
            }
        }
        return sim
    }

    func radio() async throws(ModemError) -> RadioState {
        let operation = "query the radio state"
        let response = try await command(operation, mbim_message_radio_state_query_new(nil))!
        var hardware = MBIM_RADIO_SWITCH_STATE_OFF, software = MBIM_RADIO_SWITCH_STATE_OFF
        try parse(operation) { error in
            mbim_message_radio_state_response_parse(response.message, &hardware, &software, &error)
        }
        return hardware == MBIM_RADIO_SWITCH_STATE_ON && software == MBIM_RADIO_SWITCH_STATE_ON ? .on : .off
    }

    func homeOperator() async throws(ModemError) -> NetworkOperator? {
        let operation = "query the home provider"
        guard
            let response = try await command(
                operation, mbim_message_home_provider_query_new(nil),
                states: [
                    MBIM_STATUS_ERROR_SIM_NOT_INSERTED, MBIM_STATUS_ERROR_PIN_REQUIRED,
                    MBIM_STATUS_ERROR_NOT_INITIALIZED, MBIM_STATUS_ERROR_BAD_SIM
                ])
        else { return nil }
        var provider: UnsafeMutablePointer<MbimProvider>?
        try parse(operation) { error in mbim_message_home_provider_response_parse(response.message, &provider, &error) }
        defer { mbim_provider_free(provider) }
        guard let provider = provider?.pointee else { return nil }
        return NetworkOperator(
            id: string(provider.provider_id).flatMap(NetworkOperator.plmnID),
            name: string(provider.provider_name))
    }

    func registration() async throws(ModemError) -> Registration {
        let operation = "query the register state"
        let response = try await command(operation, mbim_message_register_state_query_new(nil))!
        var networkError = MBIM_NW_ERROR_NONE
        var state = MBIM_REGISTER_STATE_UNKNOWN
        var dataClasses = MbimDataClass(rawValue: 0)
        var providerID: UnsafeMutablePointer<gchar>?, providerName: UnsafeMutablePointer<gchar>?
        // MBIMEx v2 and later add the preferred data classes.
        let v2 = extensionsVersion >= 2
        try parse(operation) { error in
            v2
                ? mbim_message_ms_basic_connect_v2_register_state_response_parse(
                    response.message, &networkError, &state, nil, &dataClasses, nil,
                    &providerID, &providerName, nil, nil, nil, &error)
                : mbim_message_register_state_response_parse(
                    response.message, &networkError, &state, nil, &dataClasses, nil,
                    &providerID, &providerName, nil, nil, &error)
        }
        return Self.registration(
            state, networkError: networkError, dataClasses: dataClasses, providerID: taken(providerID),
            providerName: taken(providerName))
    }

    /// A register state (of a response or an indication) as a `Registration`.
    nonisolated static func registration(
        _ state: MbimRegisterState, networkError: MbimNwError, dataClasses: MbimDataClass,
        providerID: String?, providerName: String?
    ) -> Registration {
        var registration = Registration(state: .unknown)
        switch state {
        case MBIM_REGISTER_STATE_HOME: registration.state = .home
        case MBIM_REGISTER_STATE_ROAMING, MBIM_REGISTER_STATE_PARTNER: registration.state = .roaming
        case MBIM_REGISTER_STATE_SEARCHING: registration.state = .searching
        case MBIM_REGISTER_STATE_DENIED: registration.state = .denied
        case MBIM_REGISTER_STATE_DEREGISTERED: registration.state = .notRegistered
        default: registration.state = .unknown
        }
        if registration.isRegistered {
            registration.servingOperator = NetworkOperator(
                id: providerID.flatMap(NetworkOperator.plmnID), name: providerName)
            registration.accessTechnology = technology(dataClasses)
        }
        if networkError != MBIM_NW_ERROR_NONE { registration.networkError = networkErrorName(networkError.rawValue) }
        return registration
    }

    /// `plmn-not-allowed`; a 3GPP cause that libmbim does not name by its 3GPP name
    /// (`regular-deactivation`); else `network error N`.
    nonisolated static func networkErrorName(_ code: UInt32) -> String {
        mbim_nw_error_get_string(MbimNwError(rawValue: code)).map { String(cString: $0) }
            ?? NetworkCause.name(Int(code)) ?? "network error \(code)"
    }

    func signal() async throws(ModemError) -> Signal? {
        let state = try await signalState()
        return Self.rssiDbm(state.rssi).map { Signal(rssiDbm: $0) }
    }

    func packetService() async throws(ModemError) -> PacketServiceState {
        let operation = "query the packet service state"
        guard
            let response = try await command(
                operation, mbim_message_packet_service_query_new(nil),
                states: [
                    MBIM_STATUS_ERROR_RADIO_POWER_OFF, MBIM_STATUS_ERROR_NOT_REGISTERED,
                    MBIM_STATUS_ERROR_SIM_NOT_INSERTED, MBIM_STATUS_ERROR_PIN_REQUIRED,
                    MBIM_STATUS_ERROR_PACKET_SERVICE_DETACHED
                ])
        else { return .detached }
        var state = MBIM_PACKET_SERVICE_STATE_UNKNOWN
        var tai: UnsafeMutablePointer<MbimTai>?
        defer { g_free(tai) }
        // MBIMEx v3 reads the data class as MbimDataClassV3 and adds the subclass and the TAI.
        let v3 = extensionsVersion >= 3
        try parse(operation) { error in
            v3
                ? mbim_message_ms_basic_connect_v3_packet_service_response_parse(
                    response.message, nil, &state, nil, nil, nil, nil, nil, &tai, &error)
                : mbim_message_packet_service_response_parse(response.message, nil, &state, nil, nil, nil, &error)
        }
        return Self.packetService(state)
    }

    nonisolated static func packetService(_ state: MbimPacketServiceState) -> PacketServiceState {
        switch state {
        case MBIM_PACKET_SERVICE_STATE_ATTACHED: .attached
        case MBIM_PACKET_SERVICE_STATE_ATTACHING: .attaching
        case MBIM_PACKET_SERVICE_STATE_DETACHED: .detached
        case MBIM_PACKET_SERVICE_STATE_DETACHING: .detaching
        default: .unknown
        }
    }

    /// The subscriber ready status tells the state and the identities at once.
    func simState() async throws(ModemError) -> SIMStatus { try await sim() }

    func bearerState() async throws(ModemError) -> BearerState {
        let operation = "query the connection state"
        let v3 = extensionsVersion >= 3
        let request =
            v3
            ? mbim_message_ms_basic_connect_v3_connect_query_new(0, nil)
            : mbim_message_connect_query_new(
                0, MBIM_ACTIVATION_STATE_UNKNOWN, MBIM_VOICE_CALL_STATE_NONE,
                MBIM_CONTEXT_IP_TYPE_DEFAULT, mbim_uuid_from_context_type(MBIM_CONTEXT_TYPE_INTERNET),
                0, nil)
        guard let response = try await command(operation, request, states: Self.noBearerStatuses) else {
            return .disconnected
        }
        var activation = MBIM_ACTIVATION_STATE_UNKNOWN
        try parse(operation) { error in Self.parseConnect(response.message, v3: v3, &activation, nil, &error) }
        return Self.bearerState(activation)
    }

    func ipConfiguration() async throws(ModemError) -> BearerStatus {
        var bearer = BearerStatus(state: .connected)
        try await readIPConfiguration(into: &bearer)
        return bearer
    }

    /// Session 0's connection state and, when it is activated, its IP configuration.
    func bearer() async throws(ModemError) -> BearerStatus {
        let state = try await bearerState()
        return state == .connected ? try await ipConfiguration() : BearerStatus(state: state)
    }

    /// The MBIMEx version the device speaks now: 0 or 1 for MBIM 1.0, else 2 or 3. cellpath
    /// does not negotiate one (MBIM OPEN resets it to 1.0); through mbim-proxy, the version that
    /// another client (ModemManager, `mbimcli --device-open-ms-mbimex-v3`) negotiated, which
    /// mbim-proxy reports to every client and libmbim keeps.
    var extensionsVersion: UInt8 { mbim_device_get_ms_mbimex_version(device, nil) }

    /// The MBIMEx version another client of mbim-proxy negotiated (0: MBIM 1.0); not read when
    /// the port was opened directly, where OPEN resets it.
    func firmwareTraits() async throws(ModemError) -> FirmwareTraits {
        guard session.proxied else { return FirmwareTraits() }
        let version = Int(extensionsVersion)
        return FirmwareTraits(mbimExtensions: version >= 2 ? version : 0)
    }

    /// Parses a CONNECT response or indication in the layout of its MBIMEx version (v3: media
    /// preference and access string after the network error); frees the access string.
    nonisolated static func parseConnect(
        _ message: OpaquePointer, v3: Bool, _ activation: inout MbimActivationState,
        _ networkError: UnsafeMutablePointer<UInt32>?, _ error: inout UnsafeMutablePointer<GError>?,
        sessionID: UnsafeMutablePointer<UInt32>? = nil, indication: Bool = false
    ) -> gboolean {
        guard v3 else {
            return indication
                ? mbim_message_connect_notification_parse(
                    message, sessionID, &activation, nil, nil, nil, networkError, &error)
                : mbim_message_connect_response_parse(
                    message, sessionID, &activation, nil, nil, nil, networkError, &error)
        }
        var accessString: UnsafeMutablePointer<gchar>?
        defer { g_free(accessString) }
        return indication
            ? mbim_message_ms_basic_connect_v3_connect_notification_parse(
                message, sessionID, &activation, nil, nil, nil, networkError, nil, &accessString, nil, &error)
            : mbim_message_ms_basic_connect_v3_connect_response_parse(
                message, sessionID, &activation, nil, nil, nil, networkError, nil, &accessString, nil, &error)
    }

    nonisolated static func bearerState(_ activation: MbimActivationState) -> BearerState {
        switch activation {
        case MBIM_ACTIVATION_STATE_ACTIVATED: .connected
        case MBIM_ACTIVATION_STATE_ACTIVATING: .connecting
        case MBIM_ACTIVATION_STATE_DEACTIVATED: .disconnected
        case MBIM_ACTIVATION_STATE_DEACTIVATING: .disconnecting
        default: .unknown
        }
    }

    /// Statuses of a CONNECT query that mean there is no bearer.
    static let noBearerStatuses = [
        MBIM_STATUS_ERROR_SIM_NOT_INSERTED, MBIM_STATUS_ERROR_PIN_REQUIRED, MBIM_STATUS_ERROR_RADIO_POWER_OFF,
        MBIM_STATUS_ERROR_NOT_REGISTERED, MBIM_STATUS_ERROR_CONTEXT_NOT_ACTIVATED,
        MBIM_STATUS_ERROR_PACKET_SERVICE_DETACHED
    ]

    func readIPConfiguration(into bearer: inout BearerStatus) async throws(ModemError) {
        let operation = "query the IP configuration"
        let request = mbim_message_ip_configuration_query_new(
            0, MbimIPConfigurationAvailableFlag(rawValue: 0),
            MbimIPConfigurationAvailableFlag(rawValue: 0), 0, nil, 0, nil,
            nil, nil, 0, nil, 0, nil, 0, 0, nil)
        guard let response = try await command(operation, request, states: [MBIM_STATUS_ERROR_CONTEXT_NOT_ACTIVATED])
        else {
            return
        }
        var addressCount: UInt32 = 0, dnsCount: UInt32 = 0, mtu: UInt32 = 0
        var addresses: UnsafeMutablePointer<UnsafeMutablePointer<MbimIPv4Element>?>?
        var gateway: UnsafePointer<MbimIPv4>?
        var dns: UnsafeMutablePointer<MbimIPv4>?
        var addressCount6: UInt32 = 0, dnsCount6: UInt32 = 0, mtu6: UInt32 = 0
        var addresses6: UnsafeMutablePointer<UnsafeMutablePointer<MbimIPv6Element>?>?
        var gateway6: UnsafePointer<MbimIPv6>?
        var dns6: UnsafeMutablePointer<MbimIPv6>?
        try parse(operation) { error in
            mbim_message_ip_configuration_response_parse(
                response.message, nil, nil, nil, &addressCount, &addresses,
                &addressCount6, &addresses6, &gateway, &gateway6, &dnsCount, &dns,
                &dnsCount6, &dns6, &mtu, &mtu6, &error)
        }
        defer {
            mbim_ipv4_element_array_free(addresses)
            mbim_ipv6_element_array_free(addresses6)
            g_free(dns)
            g_free(dns6)
        }
        if addressCount > 0, let first = addresses?[0]?.pointee {
            bearer.ipv4Address = Self.text(first.ipv4_address)
            bearer.prefixLength = Int(first.on_link_prefix_length)
            bearer.gateway = gateway.map { Self.text($0.pointee) }
        }
        if addressCount6 > 0, let first = addresses6?[0]?.pointee {
            bearer.ipv6Address = Self.text(first.ipv6_address)
            bearer.ipv6PrefixLength = Int(first.on_link_prefix_length)
            bearer.ipv6Gateway = gateway6.map { Self.text($0.pointee) }.flatMap { $0 == "::" ? nil : $0 }
        }
        if let dns { bearer.dnsServers = (0 ..< Int(dnsCount)).map { Self.text(dns[$0]) } }
        if let dns6 { bearer.dnsServers += (0 ..< Int(dnsCount6)).map { Self.text(dns6[$0]) } }
        bearer.mtu = mtu > 0 ? Int(mtu) : mtu6 > 0 ? Int(mtu6) : nil
    }

    // MARK: Messages

    /// A response message, released with its last reference.
    final class Response {
        let message: OpaquePointer
        init(_ message: OpaquePointer) { self.message = message }
        deinit { mbim_message_unref(message) }
    }

    /// Sends `request` (and releases it) and returns the response, or nil when the modem
    /// answered one of `states`: statuses that describe a state (no SIM, radio off) rather
    /// than a failure. `session` gives the time limit (default: the modem's session).
    func command(
        _ operation: String, _ request: OpaquePointer?, states: [MbimStatusError] = [],
        session: ModemSession? = nil
    ) async throws(ModemError) -> Response? {
        let session = session ?? self.session
        let (response, failure) = try await exchange(operation, request, session: session)
        guard let failure else { return response }
        if failure.domain == mbim_status_error_quark(),
            states.contains(where: { Int32(bitPattern: $0.rawValue) == failure.code })
        {
            return nil
        }
        throw session.error(operation, failure)
    }

    /// Sends `request` (and releases it) and returns the response with the status error it
    /// carries (nil on success): a failed CONNECT still says the network's reason. Without
    /// `followingTask`, the call is not given up when the task is cancelled (it keeps its time limit).
    func exchange(
        _ operation: String, _ request: OpaquePointer?, session: ModemSession, followingTask: Bool = true
    )
        async throws(ModemError) -> (Response, GLibError?)
    {
        guard let request else {
            throw ModemError(
                .transport, .internalError, operation: session.describe(operation),
                reason: "libmbim could not build the request")
        }
        defer { mbim_message_unref(request) }
        let device = device, timeout = session.libraryTimeout
        let response = try await session.call(operation, extraTime: followingTask ? nil : .zero) { call in
            mbim_device_command(device, request, timeout, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard let message = mbim_device_command_finish(device, result, &error) else {
                throw GLibError(taking: error)
            }
            return Response(message)
        }
        var error: UnsafeMutablePointer<GError>?
        if mbim_message_response_get_result(response.message, MBIM_MESSAGE_TYPE_COMMAND_DONE, &error) != 0 {
            return (response, nil)
        }
        return (response, GLibError(taking: error))
    }

    /// Runs a libmbim `_response_parse`; a response it cannot read is a protocol error.
    func parse(_ operation: String, _ body: (inout UnsafeMutablePointer<GError>?) -> gboolean) throws(ModemError) {
        var error: UnsafeMutablePointer<GError>?
        guard body(&error) == 0 else { return }
        throw ModemError(
            .protocol, .unavailable, operation: session.describe(operation),
            reason: "the answer could not be read: \(GLibError(taking: error).message)")
    }

    /// The most capable technology among MBIM data classes.
    nonisolated static func technology(_ classes: MbimDataClass) -> AccessTechnology? {
        let bits = classes.rawValue
        let ranked: [(MbimDataClass, AccessTechnology)] = [
            (MBIM_DATA_CLASS_5G_SA, .nr5g), (MBIM_DATA_CLASS_5G_NSA, .nr5g), (MBIM_DATA_CLASS_LTE, .lte),
            (MBIM_DATA_CLASS_HSUPA, .hspa), (MBIM_DATA_CLASS_HSDPA, .hspa), (MBIM_DATA_CLASS_UMTS, .umts),
            (MBIM_DATA_CLASS_EDGE, .edge), (MBIM_DATA_CLASS_GPRS, .gprs),
            (MBIM_DATA_CLASS_1XRTT, .cdma), (MBIM_DATA_CLASS_1XEVDO, .cdma)
        ]
        if let match = ranked.first(where: { bits & $0.0.rawValue != 0 }) { return match.1 }
        return bits == 0 ? nil : .other
    }

    nonisolated static func text(_ address: MbimIPv4) -> String {
        let a = address.addr
        return "\(a.0).\(a.1).\(a.2).\(a.3)"
    }

    /// An IPv6 address as the C library prints it (`2001:db8::2`).
    nonisolated static func text(_ address: MbimIPv6) -> String {
        withUnsafeBytes(of: address.addr) { ipv6Text(Array($0)) }
    }
}

/// A string the library allocated, copied and freed; nil when absent or empty.
func taken(_ text: UnsafeMutablePointer<gchar>?) -> String? {
    defer { g_free(text) }
    return string(text)
}

/// A NULL-terminated string array the library allocated, copied and freed; empty strings dropped.
func takenList(_ list: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
    defer { g_strfreev(list) }
    guard let list else { return [] }
    var items: [String] = []
    var index = 0
    while let item = list[index] {
        if let text = string(item) { items.append(text) }
        index += 1
    }
    return items
}

/// A C string the library owns, copied; nil when absent or empty (after trimming spaces).
func string(_ text: UnsafePointer<gchar>?) -> String? {
    guard let text else { return nil }
    let value = String(cString: text).trimmingSpaces
    return value.isEmpty ? nil : value
}

func string(_ text: UnsafeMutablePointer<gchar>?) -> String? {
    string(UnsafePointer(text))
}

extension String {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\0" }.reversed().drop { $0 == " " || $0 == "\0" }.reversed())
    }
}
