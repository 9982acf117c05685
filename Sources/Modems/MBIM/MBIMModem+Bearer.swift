import CGIO
import CMBIM
import CellpathCore
import GLibRuntime

/// The changes a bearer's bring-up makes: PIN, radio, packet service attach, CONNECT
/// activate/deactivate of session 0, and the Basic Connect indications.
extension MBIMModem {
    func unlockSIM(pin: String) async throws(ModemError) -> SIMStatus {
        let operation = "unlock the SIM"
        let (response, failure) = try await exchange(
            operation,
            mbim_message_pin_set_new(
                MBIM_PIN_TYPE_PIN1, MBIM_PIN_OPERATION_ENTER,
                pin, "", nil), session: session)
        if let failure {
            guard failure.domain == mbim_status_error_quark() else { throw session.error(operation, failure) }
            // A refused PIN answers with the PIN state, attempts left included.
            var type = MBIM_PIN_TYPE_UNKNOWN, state = MBIM_PIN_STATE_UNLOCKED
            var attempts: UInt32 = 0
            var error: UnsafeMutablePointer<GError>?
            let parsed = mbim_message_pin_response_parse(response.message, &type, &state, &attempts, &error) != 0
            if !parsed { g_error_free(error) }
            let left =
                parsed && type == MBIM_PIN_TYPE_PIN1 ? " (\(attempts) attempt\(attempts == 1 ? "" : "s") left)" : ""
            let locked = parsed && type == MBIM_PIN_TYPE_PUK1 ? ": the SIM now asks for its PUK" : left
            throw ModemError(
                .protocol, .permission, operation: session.describe(operation),
                reason: "the SIM refused the PIN\(locked)", hint: "check the PIN in the --pin-file",
                status: session.error(operation, failure).status)
        }
        return try await simState()
    }

    func setRadio(_ state: RadioState) async throws(ModemError) {
        let operation = "switch the radio \(state.rawValue)"
        _ = try await command(
            operation,
            mbim_message_radio_state_set_new(
                state == .on ? MBIM_RADIO_SWITCH_STATE_ON : MBIM_RADIO_SWITCH_STATE_OFF,
                nil),
            session: Task.isCancelled || session.secondsLeft <= 0 ? session.cleanup() : nil)
    }

    func attachPacketService() async throws(ModemError) {
        _ = try await command(
            "attach to the packet service", mbim_message_packet_service_set_new(MBIM_PACKET_SERVICE_ACTION_ATTACH, nil))
    }

    func connect(_ settings: BearerSettings) async throws(ModemError) -> BearerHandle {
        let operation = "connect the bearer"
        let auth =
            switch settings.authentication {
            case .none: MBIM_AUTH_PROTOCOL_NONE
            case .pap: MBIM_AUTH_PROTOCOL_PAP
            case .chap: MBIM_AUTH_PROTOCOL_CHAP
            case .mschapv2: MBIM_AUTH_PROTOCOL_MSCHAPV2
            }
        let v3 = extensionsVersion >= 3
        let request = connectRequest(
            MBIM_ACTIVATION_COMMAND_ACTIVATE, apn: settings.apn ?? "", user: settings.user ?? "",
            password: settings.password ?? "", auth: auth, ipType: Self.contextIPType(settings.ipType), v3: v3)
        let (response, failure) = try await exchange(operation, request, session: session, followingTask: false)
        var activation = MBIM_ACTIVATION_STATE_UNKNOWN
        var networkError: UInt32 = 0
        var error: UnsafeMutablePointer<GError>?
        if Self.parseConnect(response.message, v3: v3, &activation, &networkError, &error) == 0 {
            g_error_free(error)
        }
        if let failure {
            var refused = session.error(operation, failure)
            if networkError != 0 {
                refused.reason =
                    "the network refused it: \(Self.networkErrorName(networkError)) (3GPP cause \(networkError))"
                refused.hint = NetworkCause.hint(Int(networkError))
            }
            throw refused
        }
        guard Self.bearerState(activation) == .connected else {
            throw ModemError(
                .protocol, .unavailable, operation: session.describe(operation),
                reason: "the modem answered \(Self.bearerState(activation).rawValue), not activated")
        }
        return BearerHandle(sessionID: 0)
    }

    /// A CONNECT set of session 0 in the layout of the MBIMEx version the device speaks (v3:
    /// compression, auth and IP type first, then the strings).
    private func connectRequest(
        _ command: MbimActivationCommand, apn: String = "", user: String = "", password: String = "",
        auth: MbimAuthProtocol = MBIM_AUTH_PROTOCOL_NONE, ipType: MbimContextIpType = MBIM_CONTEXT_IP_TYPE_DEFAULT,
        v3: Bool
    ) -> OpaquePointer? {
        let context = mbim_uuid_from_context_type(MBIM_CONTEXT_TYPE_INTERNET)
        return v3
            ? mbim_message_ms_basic_connect_v3_connect_set_new(
                0, command, MBIM_COMPRESSION_NONE, auth, ipType, context, MBIM_ACCESS_MEDIA_TYPE_UNKNOWN, apn, user,
                password, nil, nil)
            : mbim_message_connect_set_new(
                0, command, apn, user, password, MBIM_COMPRESSION_NONE, auth, ipType, context, nil)
    }

    /// The context IP type asked for: IPv4v6 lets the network grant one family or both.
    nonisolated static func contextIPType(_ type: BearerIPType) -> MbimContextIpType {
        switch type {
        case .ipv4: MBIM_CONTEXT_IP_TYPE_IPV4
        case .ipv6: MBIM_CONTEXT_IP_TYPE_IPV6
        case .ipv4v6: MBIM_CONTEXT_IP_TYPE_IPV4V6
        }
    }

    func disconnect(_ handle: BearerHandle?) async throws(ModemError) -> Bool {
        let request = connectRequest(MBIM_ACTIVATION_COMMAND_DEACTIVATE, v3: extensionsVersion >= 3)
        // A context that is not active (or gone with the registration) is down already.
        return try await command(
            "disconnect the bearer", request, states: Self.noBearerStatuses, session: session.cleanup()) != nil
    }

    func indications() async throws(ModemError) -> AsyncStream<ModemIndication> {
        if let indicationSink { return indicationSink.stream }
        let sink = IndicationSink()
        indicationSink = sink
        indicationHandler = cmbim_device_connect_indicate_status(
            device,
            { device, message, data in
                guard let message,
                    let indication = MBIMModem.indication(
                        message, extensions: device.map { mbim_device_get_ms_mbimex_version($0, nil) } ?? 0)
                else { return }
                Unmanaged<IndicationSink>.fromOpaque(data!).takeUnretainedValue().yield(indication)
            }, Unmanaged.passRetained(sink).toOpaque(),
            { data, _ in
                Unmanaged<IndicationSink>.fromOpaque(data!).release()
            })
        return sink.stream
    }

    /// MBIM has no clients to give back.
    func releaseCheckClients() async {}

    /// Connect indications reach every client of the port (through mbim-proxy too).
    func followBearer(_ handle: BearerHandle?) async -> BearerFollowing { .everyChange }

    /// A Basic Connect indication as a `ModemIndication`: register state, packet service, or
    /// session 0's connection; nil for the others, in the layouts of MBIMEx version `extensions`.
    /// Called on the loop thread by the signal.
    nonisolated static func indication(_ message: OpaquePointer, extensions: UInt8 = 0) -> ModemIndication? {
        guard mbim_message_indicate_status_get_service(message) == MBIM_SERVICE_BASIC_CONNECT else { return nil }
        var error: UnsafeMutablePointer<GError>?
        defer { if error != nil { g_error_free(error) } }
        switch mbim_message_indicate_status_get_cid(message) {
        case MBIM_CID_BASIC_CONNECT_REGISTER_STATE.rawValue:
            var networkError = MBIM_NW_ERROR_NONE, state = MBIM_REGISTER_STATE_UNKNOWN
            var dataClasses = MbimDataClass(rawValue: 0)
            var providerID: UnsafeMutablePointer<gchar>?, providerName: UnsafeMutablePointer<gchar>?
            let parsed =
                extensions >= 2
                ? mbim_message_ms_basic_connect_v2_register_state_notification_parse(
                    message, &networkError, &state, nil, &dataClasses, nil,
                    &providerID, &providerName, nil, nil, nil, &error)
                : mbim_message_register_state_notification_parse(
                    message, &networkError, &state, nil, &dataClasses, nil,
                    &providerID, &providerName, nil, nil, &error)
            guard parsed != 0 else { return nil }
            return .registration(
                registration(
                    state, networkError: networkError, dataClasses: dataClasses,
                    providerID: taken(providerID), providerName: taken(providerName)))
        case MBIM_CID_BASIC_CONNECT_PACKET_SERVICE.rawValue:
            var state = MBIM_PACKET_SERVICE_STATE_UNKNOWN
            var tai: UnsafeMutablePointer<MbimTai>?
            defer { g_free(tai) }
            let parsed =
                extensions >= 3
                ? mbim_message_ms_basic_connect_v3_packet_service_notification_parse(
                    message, nil, &state, nil, nil, nil, nil, nil, &tai, &error)
                : mbim_message_packet_service_notification_parse(message, nil, &state, nil, nil, nil, &error)
            guard parsed != 0 else { return nil }
            return .packetService(packetService(state))
        case MBIM_CID_BASIC_CONNECT_CONNECT.rawValue:
            var sessionID: UInt32 = 0, activation = MBIM_ACTIVATION_STATE_UNKNOWN, networkError: UInt32 = 0
            guard
                parseConnect(
                    message, v3: extensions >= 3, &activation, &networkError, &error, sessionID: &sessionID,
                    indication: true) != 0,
                sessionID == 0
            else { return nil }
            return .bearer(bearerState(activation), reason: networkError == 0 ? nil : networkErrorName(networkError))
        default:
            return nil
        }
    }
}
