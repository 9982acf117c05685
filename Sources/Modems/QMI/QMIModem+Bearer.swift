import CGIO
import CQMI
import CellpathCore
import GLibRuntime

/// The changes a bearer's bring-up makes: PIN, operating mode, WDS Start/Stop Network (the
/// WDS client that started the call kept allocated), and the NAS and WDS indications.
extension QMIModem {
    func unlockSIM(pin: String) async throws(ModemError) -> SIMStatus {
        try await throughDMSOrUIM(
            dms: { () async throws(ModemError) in try await dmsVerifyPIN(pin) },
            uim: { () async throws(ModemError) in try await uimVerifyPIN(pin) })
        return try await simState()
    }

    /// DMS UIM Verify PIN.
    private func dmsVerifyPIN(_ pin: String) async throws(ModemError) {
        let operation = "unlock the SIM"
        let input = qmi_message_dms_uim_verify_pin_input_new()
        defer { qmi_message_dms_uim_verify_pin_input_unref(input) }
        _ = qmi_message_dms_uim_verify_pin_input_set_info(input, QMI_DMS_UIM_PIN_ID_PIN, pin, nil)
        let (output, failure) = try await exchange(
            operation, client(QMI_SERVICE_DMS), session: session,
            start: { client, timeout, call in
                qmi_client_dms_uim_verify_pin(
                    cqmi_client_dms(client), input, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_dms_uim_verify_pin_finish(cqmi_client_dms(client), result, error)
            },
            result: qmi_message_dms_uim_verify_pin_output_get_result, unref: qmi_message_dms_uim_verify_pin_output_unref
        )
        guard let failure else { return }
        var left: UInt8 = 0, unblockLeft: UInt8 = 0
        let known =
            qmi_message_dms_uim_verify_pin_output_get_pin_retries_status(output.pointer, &left, &unblockLeft, nil) != 0
        throw pinRefusal(operation, failure, retriesLeft: known ? left : nil)
    }

    func setRadio(_ state: RadioState) async throws(ModemError) {
        let input = qmi_message_dms_set_operating_mode_input_new()
        defer { qmi_message_dms_set_operating_mode_input_unref(input) }
        _ = qmi_message_dms_set_operating_mode_input_set_mode(
            input,
            state == .on
                ? QMI_DMS_OPERATING_MODE_ONLINE
                : QMI_DMS_OPERATING_MODE_LOW_POWER, nil)
        _ = try await request(
            "switch the radio \(state.rawValue)", QMI_SERVICE_DMS,
            session: Task.isCancelled || session.secondsLeft <= 0 ? session.cleanup() : nil,
            start: { client, timeout, call in
                qmi_client_dms_set_operating_mode(
                    cqmi_client_dms(client), input, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_dms_set_operating_mode_finish(cqmi_client_dms(client), result, error)
            },
            result: qmi_message_dms_set_operating_mode_output_get_result,
            unref: qmi_message_dms_set_operating_mode_output_unref)
    }

    /// QMI modems attach to the packet service by themselves once registered.
    func attachPacketService() async throws(ModemError) {}

    func connect(_ settings: BearerSettings) async throws(ModemError) -> BearerHandle {
        let operation = "start the network"
        let authentication: QmiWdsAuthentication
        switch settings.authentication {
        case .none: authentication = QMI_WDS_AUTHENTICATION_NONE
        case .pap: authentication = QMI_WDS_AUTHENTICATION_PAP
        case .chap: authentication = QMI_WDS_AUTHENTICATION_CHAP
        case .mschapv2:
            throw ModemError(
                .protocol, .unavailable, operation: session.describe(operation), reason: "QMI knows PAP and CHAP only",
                hint: "use --auth chap or pap")
        }
        switch settings.ipType {
        case .ipv4:
            let call = try await startCall(operation, settings, authentication, ipv6: false)
            return BearerHandle(clientID: call.clientID, packetDataHandle: call.handle)
        case .ipv6:
            let call = try await startCall(operation, settings, authentication, ipv6: true)
            return BearerHandle(clientID: call.clientID, packetDataHandle: call.handle)
        case .ipv4v6:
            // Dual stack is two calls, one per family on its own client, as real QMI modems do,
            // started together; the network may grant one family only (3GPP causes 50/51),
            // which is no failure.
            async let v4Started = ModemResult.of { @GLibActor () async throws(ModemError) in
                try await self.startCall(operation, settings, authentication, ipv6: false)
            }
            async let v6Started = ModemResult.of { @GLibActor () async throws(ModemError) in
                try await self.startCall(operation, settings, authentication, ipv6: true)
            }
            let v4 = await v4Started, v6 = await v6Started
            // Unanswered or cancelled: a call that started is stopped here, as the bring-up's
            // undo would not know it.
            for case .failure(let error) in [v4, v6] where error.layer == .transport || error.kind == .cancelled {
                for case .success(let call) in [v4, v6] {
                    _ = try? await stopCall(
                        operation, clientID: call.clientID, packetDataHandle: call.handle, session.cleanup())
                }
                throw error
            }
            switch (v4, v6) {
            case (.success(let v4), .success(let v6)):
                return BearerHandle(
                    clientID: v4.clientID, packetDataHandle: v4.handle, ipv6ClientID: v6.clientID,
                    ipv6PacketDataHandle: v6.handle)
            case (.success(let v4), .failure(let refused)):
                session.logger.info("IPv6 refused, connected with IPv4 only: \(refused.reason)")
                releaseUnusedIPv6Client()
                return BearerHandle(clientID: v4.clientID, packetDataHandle: v4.handle)
            case (.failure(let refused), .success(let v6)):
                session.logger.info("IPv4 refused, connected with IPv6 only: \(refused.reason)")
                return BearerHandle(clientID: v6.clientID, packetDataHandle: v6.handle)
            case (.failure(let refused), .failure):
                throw refused
            }
        }
    }

    /// Starts one call of one family: IPv4 on the general WDS client, IPv6 on the IPv6 client
    /// (whose Packet Service Status indications are then followed too). The client is kept.
    private func startCall(
        _ operation: String, _ settings: BearerSettings, _ authentication: QmiWdsAuthentication,
        ipv6: Bool
    ) async throws(ModemError) -> (clientID: Int, handle: UInt32) {
        let client = ipv6 ? try await ipv6WDSClient() : try await client(QMI_SERVICE_WDS)
        try await bindMuxDataPort(client)
        let (output, failure) = try await startNetwork(operation, client, settings, authentication, ipv6: ipv6)
        var handle: UInt32 = 0
        let hasHandle = qmi_message_wds_start_network_output_get_packet_data_handle(output.pointer, &handle, nil) != 0
        if let failure {
            throw refusal(operation, failure, output)
        }
        guard hasHandle else {
            throw ModemError(
                .protocol, .unavailable, operation: session.describe(operation),
                reason: "the modem gave no packet data handle")
        }
        if ipv6 {
            keptIPv6Client = client
            expectsIPv6 = true
            followIPv6Call(client)
        } else {
            keptClient = client
        }
        return (Int(qmi_client_get_cid(client)), handle)
    }

    /// Sends Start Network on `client` (not given up when the task is cancelled).
    private func startNetwork(
        _ operation: String, _ client: UnsafeMutablePointer<QmiClient>, _ settings: BearerSettings,
        _ authentication: QmiWdsAuthentication, ipv6: Bool
    ) async throws(ModemError) -> (Output, GLibError?) {
        let input = qmi_message_wds_start_network_input_new()
        defer { qmi_message_wds_start_network_input_unref(input) }
        if let apn = settings.apn { _ = qmi_message_wds_start_network_input_set_apn(input, apn, nil) }
        _ = qmi_message_wds_start_network_input_set_ip_family_preference(
            input, ipv6 ? QMI_WDS_IP_FAMILY_IPV6 : QMI_WDS_IP_FAMILY_IPV4, nil)
        if authentication != QMI_WDS_AUTHENTICATION_NONE {
            _ = qmi_message_wds_start_network_input_set_authentication_preference(input, authentication, nil)
        }
        if let user = settings.user { _ = qmi_message_wds_start_network_input_set_username(input, user, nil) }
        if let password = settings.password {
            _ = qmi_message_wds_start_network_input_set_password(input, password, nil)
        }
        return try await exchange(
            operation, client, session: session, followingTask: false,
            start: { client, timeout, call in
                qmi_client_wds_start_network(
                    cqmi_client_wds(client), input, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_wds_start_network_finish(cqmi_client_wds(client), result, error)
            },
            result: qmi_message_wds_start_network_output_get_result, unref: qmi_message_wds_start_network_output_unref)
    }

    /// A refused Start Network, with the call end reason and the network's cause when given.
    private func refusal(_ operation: String, _ failure: GLibError, _ output: Output) -> ModemError {
        var error = session.error(operation, failure)
        var reasons: [String] = []
        var reason = QMI_WDS_CALL_END_REASON_GENERIC_UNSPECIFIED
        if qmi_message_wds_start_network_output_get_call_end_reason(output.pointer, &reason, nil) != 0 {
            reasons.append(
                "call end reason \(qmi_wds_call_end_reason_get_string(reason).map { String(cString: $0) } ?? "\(reason.rawValue)")"
            )
        }
        var type = QMI_WDS_VERBOSE_CALL_END_REASON_TYPE_MIP, code: Int16 = 0
        if qmi_message_wds_start_network_output_get_verbose_call_end_reason(output.pointer, &type, &code, nil) != 0 {
            let name =
                qmi_wds_verbose_call_end_reason_get_string(type, code).map { String(cString: $0) } ?? "reason \(code)"
            if type == QMI_WDS_VERBOSE_CALL_END_REASON_TYPE_3GPP {
                reasons.append("the network refused it: \(name) (3GPP cause \(code))")
                error.hint = NetworkCause.hint(Int(code))
            } else {
                reasons.append(name)
            }
        }
        if !reasons.isEmpty { error.reason += ": " + reasons.joined(separator: ", ") }
        return error
    }

    func disconnect(_ handle: BearerHandle?) async throws(ModemError) -> Bool {
        let operation = "stop the network"
        let cleanup = session.cleanup()
        guard let handle, let id = handle.clientID, let known = handle.packetDataHandle else {
            guard try await bearerState() == .connected else { return false }
            throw ModemError(
                .protocol, .unavailable, operation: cleanup.describe(operation),
                reason: "the call's packet data handle is unknown (another program started the call, "
                    + "or its start was not answered in time)",
                hint: "stop it with the program that started it (ModemManager: mmcli --simple-disconnect; "
                    + "qmicli: --wds-stop-network=HANDLE --client-cid=CID)")
        }
        // A dual-stack bearer's two calls are stopped together (one round trip); both are tried.
        async let ipv6Stopped = ModemResult.of { @GLibActor () async throws(ModemError) -> Bool in
            guard let id6 = handle.ipv6ClientID, let known6 = handle.ipv6PacketDataHandle else { return false }
            return try await self.stopCall(operation, clientID: id6, packetDataHandle: known6, cleanup)
        }
        let ipv4Stopped: Result<Bool, ModemError>
        do throws(ModemError) {
            ipv4Stopped = .success(try await stopCall(operation, clientID: id, packetDataHandle: known, cleanup))
        } catch {
            ipv4Stopped = .failure(error)
        }
        let ipv6 = await ipv6Stopped
        let stoppedIPv4 = try ipv4Stopped.get()
        return try ipv6.get() || stoppedIPv4
    }

    /// Stops one call with the client that started it; false when it was over already.
    private func stopCall(
        _ operation: String, clientID id: Int, packetDataHandle: UInt32,
        _ cleanup: ModemSession
    ) async throws(ModemError) -> Bool {
        let client = try await callClient(UInt8(truncatingIfNeeded: id), cleanup)
        let input = qmi_message_wds_stop_network_input_new()
        defer { qmi_message_wds_stop_network_input_unref(input) }
        _ = qmi_message_wds_stop_network_input_set_packet_data_handle(input, packetDataHandle, nil)
        let (_, failure) = try await exchange(
            operation, client, session: cleanup,
            start: { client, timeout, call in
                qmi_client_wds_stop_network(
                    cqmi_client_wds(client), input, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_wds_stop_network_finish(cqmi_client_wds(client), result, error)
            },
            result: qmi_message_wds_stop_network_output_get_result, unref: qmi_message_wds_stop_network_output_unref)
        // Released on close: the call is over.
        if client == keptClient { keptClient = nil }
        if client == keptIPv6Client { keptIPv6Client = nil }
        guard let failure else { return true }
        // The call is over already (the network dropped it, the modem restarted and forgot the client).
        let over = [
            QMI_PROTOCOL_ERROR_INVALID_HANDLE, QMI_PROTOCOL_ERROR_OUT_OF_CALL, QMI_PROTOCOL_ERROR_NO_EFFECT,
            QMI_PROTOCOL_ERROR_INVALID_CLIENT_ID
        ]
        guard failure.domain == qmi_protocol_error_quark(), over.contains(where: { Int32($0.rawValue) == failure.code })
        else {
            throw cleanup.error(operation, failure)
        }
        if failure.code == Int32(QMI_PROTOCOL_ERROR_INVALID_CLIENT_ID.rawValue) {  // nothing to release
            if client == ipv6Client { keptIPv6Client = client } else { keptClient = client }
        }
        return false
    }

    /// The WDS client with ID `id` (kept by the run that started the call), without allocating:
    /// this session's own when it started the call, else a client object for that ID, released
    /// on close.
    private func callClient(
        _ id: UInt8, _ cleanup: ModemSession
    ) async throws(ModemError) -> UnsafeMutablePointer<QmiClient> {
        if let keptClient, qmi_client_get_cid(keptClient) == id { return keptClient }
        if let keptIPv6Client, qmi_client_get_cid(keptIPv6Client) == id { return keptIPv6Client }
        let device = device, timeout = cleanup.libraryTimeout
        let client = try await cleanup.call("use the WDS client ID \(id)") { call in
            qmi_device_allocate_client(
                device, QMI_SERVICE_WDS, id, timeout, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard let client = qmi_device_allocate_client_finish(device, result, &error) else {
                throw GLibError(taking: error)
            }
            return client
        }
        clients.append((QMI_SERVICE_WDS, client))
        return client
    }

    /// Allocates the clients of the three services at once, with those a bring-up planned (WDA,
    /// the IPv6 WDS client: one round trip, since the reads that follow need them too), follows
    /// NAS serving system and WDS packet service status indications, and sends NAS Register
    /// Indications (and the IPv6 client's Set IP Family) without waiting for its answer: that
    /// comes with the answers to the reads sent next on the same client, which the modem serves
    /// in order, so no change after a read goes unseen.
    func indications() async throws(ModemError) -> AsyncStream<ModemIndication> {
        if let indicationSink { return indicationSink.stream }
        let sink = IndicationSink()
        indicationSink = sink
        async let wdsAllocated = ModemResult.of { @GLibActor () async throws(ModemError) in
            _ = try await self.client(QMI_SERVICE_WDS)
        }
        async let dmsAllocated = ModemResult.of { @GLibActor () async throws(ModemError) in
            _ = try await self.client(QMI_SERVICE_DMS)
        }
        async let nasAllocated = ModemResult.of { @GLibActor () async throws(ModemError) in
            _ = try await self.client(QMI_SERVICE_NAS)
        }
        // What `plan` asked for; one that fails here is allocated again on first use, which
        // then reports the failure.
        async let wdaAllocated = ModemResult.of { @GLibActor () async throws(ModemError) in
            if self.plansDataFormat { _ = try await self.client(QMI_SERVICE_WDA) }
        }
        async let ipv6Allocated = ModemResult.of { @GLibActor () async throws(ModemError) in
            if self.plansIPv6 { _ = try await self.allocateIPv6Client() }
        }
        _ = await (wdaAllocated, ipv6Allocated)
        for allocated in [await nasAllocated, await wdsAllocated, await dmsAllocated] { try allocated.get() }
        follow(try await client(QMI_SERVICE_NAS), "serving-system") { output in
            var state = QMI_NAS_REGISTRATION_STATE_UNKNOWN, attach = QMI_NAS_ATTACH_STATE_UNKNOWN
            var interfaces: UnsafeMutablePointer<GArray>?
            guard
                qmi_indication_nas_serving_system_output_get_serving_system(
                    output, &state, nil, &attach, nil, &interfaces, nil) != 0
            else { return [] }
            var roaming = QMI_NAS_ROAMING_INDICATOR_STATUS_OFF
            _ = qmi_indication_nas_serving_system_output_get_roaming_indicator(output, &roaming, nil)
            var mcc: UInt16 = 0, mnc: UInt16 = 0
            var description: UnsafePointer<gchar>?
            let hasPLMN =
                qmi_indication_nas_serving_system_output_get_current_plmn(output, &mcc, &mnc, &description, nil) != 0
            var threeDigits: gboolean = 0
            _ = qmi_indication_nas_serving_system_output_get_mnc_pcs_digit_include_status(
                output, nil, nil, &threeDigits, nil)
            let registration = QMIModem.registration(
                state, roaming: roaming,
                plmn: hasPLMN ? (mcc, mnc, threeDigits != 0, string(description)) : nil,
                interfaces: interfaces)
            return [.registration(registration), .packetService(QMIModem.packetService(attach))]
        }
        // Packet Service Status indications go to the client that started the call.
        follow(try await client(QMI_SERVICE_WDS), "packet-service-status", Self.packetServiceStatus)
        await registerForServingSystemIndications()
        if ipv6Client != nil {
            let sent = SentSignal()
            setUpIPv6Client(sent: sent)
            await sent.wait()
        }
        return sink.stream
    }

    /// Follows the IPv6 call's Packet Service Status indications (they go to its client only).
    private func followIPv6Call(_ client: UnsafeMutablePointer<QmiClient>) {
        guard !indicationHandlers.contains(where: { $0.client == client }) else { return }
        follow(client, "packet-service-status", Self.packetServiceStatus)
    }

    /// A Packet Service Status indication: the call's new state and why it ended.
    nonisolated static func packetServiceStatus(_ output: OpaquePointer) -> [ModemIndication] {
        var status = QMI_WDS_CONNECTION_STATUS_UNKNOWN
        guard qmi_indication_wds_packet_service_status_output_get_connection_status(output, &status, nil, nil) != 0
        else { return [] }
        var reason: String?
        var type = QMI_WDS_VERBOSE_CALL_END_REASON_TYPE_MIP, code: Int16 = 0
        var end = QMI_WDS_CALL_END_REASON_GENERIC_UNSPECIFIED
        if qmi_indication_wds_packet_service_status_output_get_verbose_call_end_reason(output, &type, &code, nil) != 0 {
            reason = qmi_wds_verbose_call_end_reason_get_string(type, code).map { String(cString: $0) }
        } else if qmi_indication_wds_packet_service_status_output_get_call_end_reason(output, &end, nil) != 0 {
            reason = qmi_wds_call_end_reason_get_string(end).map { String(cString: $0) }
        }
        return [.bearer(bearerState(status), reason: reason)]
    }

    /// Listens on the WDS client IDs that started the calls `handle` names (a dual-stack bearer
    /// has one per family, kept allocated by the run that started them), whose Packet Service
    /// Status indications go to that client only. One request on each (the call's state) makes
    /// qmi-proxy send them here too, and tells that the ID is still the call's; the IDs are
    /// never released here.
    func followBearer(_ handle: BearerHandle?) async -> BearerFollowing {
        guard indicationSink != nil, followedCalls.isEmpty, let handle else { return .none }
        var following = BearerFollowing.none
        for id in [handle.clientID, handle.ipv6ClientID].compactMap({ $0 }) where await followCall(ofClientID: id) {
            following = .untilDown
        }
        return following
    }

    /// Listens on WDS client ID `id` for its call's indications; false when the ID is not a call's any more.
    private func followCall(ofClientID id: Int) async -> Bool {
        let device = device, timeout = session.libraryTimeout
        let client: UnsafeMutablePointer<QmiClient>
        do throws(ModemError) {
            client = try await session.call("use the WDS client ID \(id)") { call in
                qmi_device_allocate_client(
                    device, QMI_SERVICE_WDS, UInt8(truncatingIfNeeded: id), timeout, call.cancellable,
                    call.callback, call.userData)
            } finish: { result throws(GLibError) in
                var error: UnsafeMutablePointer<GError>?
                guard let client = qmi_device_allocate_client_finish(device, result, &error) else {
                    throw GLibError(taking: error)
                }
                return client
            }
        } catch {
            session.logger.debug("\(error.message)")
            return false
        }
        followedCalls.append(client)
        follow(client, "packet-service-status", Self.packetServiceStatus)
        do throws(ModemError) {
            let (_, failure) = try await exchange(
                "get the packet service status", client, session: session,
                start: { client, timeout, call in
                    qmi_client_wds_get_packet_service_status(
                        cqmi_client_wds(client), nil, timeout, call.cancellable, call.callback, call.userData)
                },
                finish: { client, result, error in
                    qmi_client_wds_get_packet_service_status_finish(cqmi_client_wds(client), result, error)
                },
                result: qmi_message_wds_get_packet_service_status_output_get_result,
                unref: qmi_message_wds_get_packet_service_status_output_unref)
            if let failure {
                session.logger.debug("\(session.error("follow the call of WDS client ID \(id)", failure).message)")
                return false
            }
        } catch {
            session.logger.debug("\(error.message)")
            return false
        }
        session.logger.debug("\(port.name): following the call of WDS client ID \(id)")
        return true
    }

    /// Sends NAS Register Indications (serving system events go only to the clients that ask)
    /// and returns once it is sent; `indicationRegistration` waits for the answer, and `close()`
    /// for it. A modem that refuses is logged: its registration changes are then seen only
    /// when read again.
    private func registerForServingSystemIndications() async {
        let sent = SentSignal()
        indicationRegistration = Task { @GLibActor in
            defer { sent.signal() }  // also when it failed before sending
            let input = qmi_message_nas_register_indications_input_new()
            defer { qmi_message_nas_register_indications_input_unref(input) }
            _ = qmi_message_nas_register_indications_input_set_serving_system_events(input, 1, nil)
            do throws(ModemError) {
                _ = try await self.request(
                    "register for serving system indications", QMI_SERVICE_NAS,
                    states: [QMI_PROTOCOL_ERROR_INVALID_QMI_COMMAND, QMI_PROTOCOL_ERROR_NOT_SUPPORTED],
                    start: { client, timeout, call in
                        qmi_client_nas_register_indications(
                            cqmi_client_nas(client), input, timeout, call.cancellable, call.callback, call.userData)
                        sent.signal()
                    },
                    finish: { client, result, error in
                        qmi_client_nas_register_indications_finish(cqmi_client_nas(client), result, error)
                    },
                    result: qmi_message_nas_register_indications_output_get_result,
                    unref: qmi_message_nas_register_indications_output_unref)
            } catch  where error.kind != .cancelled {
                self.session.logger.warning("\(error.message): registration changes are seen only when read again")
            } catch {}
        }
        await sent.wait()
    }

    /// Connects `decode` to `client`'s indication `signal`; what it returns goes to the sink.
    private func follow(
        _ client: UnsafeMutablePointer<QmiClient>, _ signal: String,
        _ decode: @escaping @Sendable (OpaquePointer) -> [ModemIndication]
    ) {
        guard let sink = indicationSink else { return }
        let handler = IndicationHandler(sink: sink, decode: decode)
        let id = cqmi_client_connect_indication(
            client, signal,
            { _, output, data in
                guard let output else { return }
                let handler = Unmanaged<IndicationHandler>.fromOpaque(data!).takeUnretainedValue()
                for indication in handler.decode(OpaquePointer(output)) { handler.sink.yield(indication) }
            }, Unmanaged.passRetained(handler).toOpaque(),
            { data, _ in
                Unmanaged<IndicationHandler>.fromOpaque(data!).release()
            })
        indicationHandlers.append((client, id))
    }

    /// What one signal handler needs: how to decode its indication, and where to send it.
    final class IndicationHandler: Sendable {
        let sink: IndicationSink
        let decode: @Sendable (OpaquePointer) -> [ModemIndication]

        init(sink: IndicationSink, decode: @escaping @Sendable (OpaquePointer) -> [ModemIndication]) {
            self.sink = sink
            self.decode = decode
        }
    }
}
