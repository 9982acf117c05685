import CellpathCore
import CGIO
import CQMI
import GLibRuntime

/// The changes a bearer's bring-up makes: PIN, operating mode, WDS Start/Stop Network (the
/// WDS client that started the call kept allocated), and the NAS and WDS indications.
extension QMIModem {
    func unlockSIM(pin: String) async throws(ModemError) -> SIMStatus {
        let operation = "unlock the SIM"
        let input = qmi_message_dms_uim_verify_pin_input_new()
        defer { qmi_message_dms_uim_verify_pin_input_unref(input) }
        _ = qmi_message_dms_uim_verify_pin_input_set_info(input, QMI_DMS_UIM_PIN_ID_PIN, pin, nil)
        let (output, failure) = try await exchange(operation, client(QMI_SERVICE_DMS), session: session, start: { client, timeout, call in
            qmi_client_dms_uim_verify_pin(cqmi_client_dms(client), input, timeout, call.cancellable, call.callback, call.userData)
        }, finish: { client, result, error in qmi_client_dms_uim_verify_pin_finish(cqmi_client_dms(client), result, error) },
           result: qmi_message_dms_uim_verify_pin_output_get_result, unref: qmi_message_dms_uim_verify_pin_output_unref)
        if let failure {
            let error = session.error(operation, failure)
            guard failure.domain == qmi_protocol_error_quark(),
                  [QMI_PROTOCOL_ERROR_INCORRECT_PIN, QMI_PROTOCOL_ERROR_PIN_BLOCKED].contains(where: { Int32($0.rawValue) == failure.code })
            else { throw error }
            var left: UInt8 = 0, unblockLeft: UInt8 = 0
            let known = qmi_message_dms_uim_verify_pin_output_get_pin_retries_status(output.pointer, &left, &unblockLeft, nil) != 0
            let what = failure.code == Int32(QMI_PROTOCOL_ERROR_PIN_BLOCKED.rawValue) || (known && left == 0)
                ? ": the SIM now asks for its PUK" : known ? " (\(left) attempt\(left == 1 ? "" : "s") left)" : ""
            throw ModemError(.protocol, .permission, operation: error.operation, reason: "the SIM refused the PIN\(what)",
                             hint: "check the PIN in the --pin-file", status: error.status)
        }
        return try await simState()
    }

    func setRadio(_ state: RadioState) async throws(ModemError) {
        let input = qmi_message_dms_set_operating_mode_input_new()
        defer { qmi_message_dms_set_operating_mode_input_unref(input) }
        _ = qmi_message_dms_set_operating_mode_input_set_mode(input, state == .on ? QMI_DMS_OPERATING_MODE_ONLINE
                                                                                  : QMI_DMS_OPERATING_MODE_LOW_POWER, nil)
        _ = try await request("switch the radio \(state.rawValue)", QMI_SERVICE_DMS, session: Task.isCancelled || session.secondsLeft <= 0 ? session.cleanup() : nil,
                              start: { client, timeout, call in
            qmi_client_dms_set_operating_mode(cqmi_client_dms(client), input, timeout, call.cancellable, call.callback, call.userData)
        }, finish: { client, result, error in qmi_client_dms_set_operating_mode_finish(cqmi_client_dms(client), result, error) },
           result: qmi_message_dms_set_operating_mode_output_get_result, unref: qmi_message_dms_set_operating_mode_output_unref)
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
            throw ModemError(.protocol, .unavailable, operation: session.describe(operation), reason: "QMI knows PAP and CHAP only",
                             hint: "use --auth chap or pap")
        }
        let client = try await client(QMI_SERVICE_WDS)
        let (output, failure) = try await startNetwork(operation, client, settings, authentication)
        var handle: UInt32 = 0
        let hasHandle = qmi_message_wds_start_network_output_get_packet_data_handle(output.pointer, &handle, nil) != 0
        if let failure {
            throw refusal(operation, failure, output)
        }
        guard hasHandle else {
            throw ModemError(.protocol, .unavailable, operation: session.describe(operation), reason: "the modem gave no packet data handle")
        }
        keptClient = client
        return BearerHandle(clientID: Int(qmi_client_get_cid(client)), packetDataHandle: handle)
    }

    /// Sends Start Network on `client` (not given up when the task is cancelled).
    private func startNetwork(_ operation: String, _ client: UnsafeMutablePointer<QmiClient>, _ settings: BearerSettings,
                              _ authentication: QmiWdsAuthentication) async throws(ModemError) -> (Output, GLibError?) {
        let input = qmi_message_wds_start_network_input_new()
        defer { qmi_message_wds_start_network_input_unref(input) }
        if let apn = settings.apn { _ = qmi_message_wds_start_network_input_set_apn(input, apn, nil) }
        _ = qmi_message_wds_start_network_input_set_ip_family_preference(input, QMI_WDS_IP_FAMILY_IPV4, nil)
        if authentication != QMI_WDS_AUTHENTICATION_NONE {
            _ = qmi_message_wds_start_network_input_set_authentication_preference(input, authentication, nil)
        }
        if let user = settings.user { _ = qmi_message_wds_start_network_input_set_username(input, user, nil) }
        if let password = settings.password { _ = qmi_message_wds_start_network_input_set_password(input, password, nil) }
        return try await exchange(operation, client, session: session, followingTask: false, start: { client, timeout, call in
            qmi_client_wds_start_network(cqmi_client_wds(client), input, timeout, call.cancellable, call.callback, call.userData)
        }, finish: { client, result, error in qmi_client_wds_start_network_finish(cqmi_client_wds(client), result, error) },
           result: qmi_message_wds_start_network_output_get_result, unref: qmi_message_wds_start_network_output_unref)
    }

    /// A refused Start Network, with the call end reason and the network's cause when given.
    private func refusal(_ operation: String, _ failure: GLibError, _ output: Output) -> ModemError {
        var error = session.error(operation, failure)
        var reasons: [String] = []
        var reason = QMI_WDS_CALL_END_REASON_GENERIC_UNSPECIFIED
        if qmi_message_wds_start_network_output_get_call_end_reason(output.pointer, &reason, nil) != 0 {
            reasons.append("call end reason \(qmi_wds_call_end_reason_get_string(reason).map { String(cString: $0) } ?? "\(reason.rawValue)")")
        }
        var type = QMI_WDS_VERBOSE_CALL_END_REASON_TYPE_MIP, code: Int16 = 0
        if qmi_message_wds_start_network_output_get_verbose_call_end_reason(output.pointer, &type, &code, nil) != 0 {
            let name = qmi_wds_verbose_call_end_reason_get_string(type, code).map { String(cString: $0) } ?? "reason \(code)"
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
        let client: UnsafeMutablePointer<QmiClient>
        let packetDataHandle: UInt32
        if let handle, let id = handle.clientID, let known = handle.packetDataHandle {
            client = try await callClient(UInt8(truncatingIfNeeded: id), cleanup)
            packetDataHandle = known
        } else {
            guard try await bearerState() == .connected else { return false }
            throw ModemError(.protocol, .unavailable, operation: cleanup.describe(operation),
                             reason: "the call's packet data handle is unknown (another program started the call, "
                               + "or its start was not answered in time)",
                             hint: "stop it with the program that started it (ModemManager: mmcli --simple-disconnect; "
                               + "qmicli: --wds-stop-network=HANDLE --client-cid=CID)")
        }
        let input = qmi_message_wds_stop_network_input_new()
        defer { qmi_message_wds_stop_network_input_unref(input) }
        _ = qmi_message_wds_stop_network_input_set_packet_data_handle(input, packetDataHandle, nil)
        let (_, failure) = try await exchange(operation, client, session: cleanup, start: { client, timeout, call in
            qmi_client_wds_stop_network(cqmi_client_wds(client), input, timeout, call.cancellable, call.callback, call.userData)
        }, finish: { client, result, error in qmi_client_wds_stop_network_finish(cqmi_client_wds(client), result, error) },
           result: qmi_message_wds_stop_network_output_get_result, unref: qmi_message_wds_stop_network_output_unref)
        if client == keptClient { keptClient = nil }  // released on close: the call is over
        guard let failure else { return true }
        // The call is over already (the network dropped it, the modem restarted and forgot the client).
        let over = [QMI_PROTOCOL_ERROR_INVALID_HANDLE, QMI_PROTOCOL_ERROR_OUT_OF_CALL, QMI_PROTOCOL_ERROR_NO_EFFECT,
                    QMI_PROTOCOL_ERROR_INVALID_CLIENT_ID]
        guard failure.domain == qmi_protocol_error_quark(), over.contains(where: { Int32($0.rawValue) == failure.code }) else {
            throw cleanup.error(operation, failure)
        }
        if failure.code == Int32(QMI_PROTOCOL_ERROR_INVALID_CLIENT_ID.rawValue) { keptClient = client }  // nothing to release
        return false
    }

    /// The WDS client with ID `id` (kept by the run that started the call), without allocating:
    /// this session's own when it started the call, else a client object for that ID, released
    /// on close.
    private func callClient(_ id: UInt8, _ cleanup: ModemSession) async throws(ModemError) -> UnsafeMutablePointer<QmiClient> {
        if let keptClient, qmi_client_get_cid(keptClient) == id { return keptClient }
        let device = device, timeout = cleanup.libraryTimeout
        let client = try await cleanup.call("use the WDS client ID \(id)") { call in
            qmi_device_allocate_client(device, QMI_SERVICE_WDS, id, timeout, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard let client = qmi_device_allocate_client_finish(device, result, &error) else { throw GLibError(taking: error) }
            return client
        }
        clients.append((QMI_SERVICE_WDS, client))
        return client
    }

    /// Allocates the clients of the three services at once (one round trip: the reads that follow
    /// need the DMS client too), follows NAS serving system and WDS packet service status
    /// indications, and sends NAS Register Indications without waiting for its answer: that
    /// comes with the answers to the reads sent next on the same client, which the modem serves
    /// in order, so no change after a read goes unseen.
    func indications() async throws(ModemError) -> AsyncStream<ModemIndication> {
        if let indicationSink { return indicationSink.stream }
        let sink = IndicationSink()
        indicationSink = sink
        async let wdsAllocated = ModemResult.of { @GLibActor () async throws(ModemError) in _ = try await self.client(QMI_SERVICE_WDS) }
        async let dmsAllocated = ModemResult.of { @GLibActor () async throws(ModemError) in _ = try await self.client(QMI_SERVICE_DMS) }
        async let nasAllocated = ModemResult.of { @GLibActor () async throws(ModemError) in _ = try await self.client(QMI_SERVICE_NAS) }
        for allocated in [await nasAllocated, await wdsAllocated, await dmsAllocated] { try allocated.get() }
        follow(try await client(QMI_SERVICE_NAS), "serving-system") { output in
            var state = QMI_NAS_REGISTRATION_STATE_UNKNOWN, attach = QMI_NAS_ATTACH_STATE_UNKNOWN
            var interfaces: UnsafeMutablePointer<GArray>?
            guard qmi_indication_nas_serving_system_output_get_serving_system(output, &state, nil, &attach, nil, &interfaces, nil) != 0
            else { return [] }
            var roaming = QMI_NAS_ROAMING_INDICATOR_STATUS_OFF
            _ = qmi_indication_nas_serving_system_output_get_roaming_indicator(output, &roaming, nil)
            var mcc: UInt16 = 0, mnc: UInt16 = 0
            var description: UnsafePointer<gchar>?
            let hasPLMN = qmi_indication_nas_serving_system_output_get_current_plmn(output, &mcc, &mnc, &description, nil) != 0
            var threeDigits: gboolean = 0
            _ = qmi_indication_nas_serving_system_output_get_mnc_pcs_digit_include_status(output, nil, nil, &threeDigits, nil)
            let registration = QMIModem.registration(state, roaming: roaming,
                                                     plmn: hasPLMN ? (mcc, mnc, threeDigits != 0, string(description)) : nil,
                                                     interfaces: interfaces)
            return [.registration(registration), .packetService(QMIModem.packetService(attach))]
        }
        // Packet Service Status indications go to the client that started the call.
        follow(try await client(QMI_SERVICE_WDS), "packet-service-status") { output in
            var status = QMI_WDS_CONNECTION_STATUS_UNKNOWN
            guard qmi_indication_wds_packet_service_status_output_get_connection_status(output, &status, nil, nil) != 0 else { return [] }
            var reason: String?
            var type = QMI_WDS_VERBOSE_CALL_END_REASON_TYPE_MIP, code: Int16 = 0
            var end = QMI_WDS_CALL_END_REASON_GENERIC_UNSPECIFIED
            if qmi_indication_wds_packet_service_status_output_get_verbose_call_end_reason(output, &type, &code, nil) != 0 {
                reason = qmi_wds_verbose_call_end_reason_get_string(type, code).map { String(cString: $0) }
            } else if qmi_indication_wds_packet_service_status_output_get_call_end_reason(output, &end, nil) != 0 {
                reason = qmi_wds_call_end_reason_get_string(end).map { String(cString: $0) }
            }
            return [.bearer(QMIModem.bearerState(status), reason: reason)]
        }
        await registerForServingSystemIndications()
        return sink.stream
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
                _ = try await self.request("register for serving system indications", QMI_SERVICE_NAS,
                                           states: [QMI_PROTOCOL_ERROR_INVALID_QMI_COMMAND, QMI_PROTOCOL_ERROR_NOT_SUPPORTED],
                                           start: { client, timeout, call in
                    qmi_client_nas_register_indications(cqmi_client_nas(client), input, timeout, call.cancellable, call.callback, call.userData)
                    sent.signal()
                }, finish: { client, result, error in qmi_client_nas_register_indications_finish(cqmi_client_nas(client), result, error) },
                   result: qmi_message_nas_register_indications_output_get_result, unref: qmi_message_nas_register_indications_output_unref)
            } catch where error.kind != .cancelled {
                self.session.logger.warning("\(error.message): registration changes are seen only when read again")
            } catch {}
        }
        await sent.wait()
    }

    /// Connects `decode` to `client`'s indication `signal`; what it returns goes to the sink.
    private func follow(_ client: UnsafeMutablePointer<QmiClient>, _ signal: String,
                        _ decode: @escaping @Sendable (OpaquePointer) -> [ModemIndication]) {
        guard let sink = indicationSink else { return }
        let handler = IndicationHandler(sink: sink, decode: decode)
        let id = cqmi_client_connect_indication(client, signal, { _, output, data in
            guard let output else { return }
            let handler = Unmanaged<IndicationHandler>.fromOpaque(data!).takeUnretainedValue()
            for indication in handler.decode(OpaquePointer(output)) { handler.sink.yield(indication) }
        }, Unmanaged.passRetained(handler).toOpaque(), { data, _ in
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
