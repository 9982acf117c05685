import CGIO
import CQMI
import CellpathCore
import GLibRuntime
import ModemDiscovery

/// A QMI modem through libqmi-glib, opened in QMI mode: DMS, NAS and WDS requests on one open
/// QmiDevice, each service's client allocated on first use and released on `close()`.
@GLibActor
final class QMIModem: ModemBackend {
    nonisolated let port: ControlPort
    nonisolated var backendName: ModemBackendName { .qmi }
    private(set) var session: ModemSession
    let device: UnsafeMutablePointer<QmiDevice>
    var clients: [(service: QmiService, client: UnsafeMutablePointer<QmiClient>)] = []
    /// The WDS client that started the call: on close it is dropped without releasing its ID,
    /// which would end the call on many modems (`disconnect` releases it).
    var keptClient: UnsafeMutablePointer<QmiClient>?
    /// The WDS client of IPv6 (WDS Set IP Family 6): it starts the IPv6 call (QMI dual stack is
    /// two calls on two clients) and reads the IPv6 settings. Allocated on first use, or with
    /// the others when a bring-up plans IPv6.
    var ipv6Client: UnsafeMutablePointer<QmiClient>?
    /// The IPv6 client's set-up (allocated, its IP family set), under way or done: shared by
    /// whoever needs the client first.
    var ipv6SetUp: Task<Result<LoopBound<UnsafeMutablePointer<QmiClient>>, ModemError>, Never>?
    /// What the bring-up planned (`plan`): the clients `indications()` allocates with the others.
    var plansIPv6 = false, plansDataFormat = false
    /// Client IDs on their way back before close (an IPv6 client whose call was refused).
    var releases: [Task<Void, Never>] = []
    /// The IPv6 client when it started a call: kept on close like `keptClient`.
    var keptIPv6Client: UnsafeMutablePointer<QmiClient>?
    /// Whether reading the settings asks the IPv6 client too (`expect(_:)`, or an IPv6 call of this session).
    var expectsIPv6 = false
    /// Signal handlers of indications, disconnected before their clients go.
    var indicationHandlers: [(client: UnsafeMutablePointer<QmiClient>, handler: gulong)] = []
    /// Where indications go, once followed; finished on close.
    var indicationSink: IndicationSink?
    /// The clients of the calls that another run started (`followBearer`: a dual-stack bearer's
    /// two), listened on for their indications; dropped on close without releasing their IDs,
    /// which are that run's.
    var followedCalls: [UnsafeMutablePointer<QmiClient>] = []
    /// NAS Register Indications, sent and waiting for its answer (see `indications()`).
    var indicationRegistration: Task<Void, Never>?
    /// The tasks waiting for a client that is being allocated, by service.
    private var allocating: [Int32: [CheckedContinuation<Void, Never>]] = [:]
    private var isOpen = true
    /// The firmware refused DMS's UIM commands: the SIM is read through the UIM service.
    var simThroughUIM = false
    /// DMS answered a UIM command in this session.
    var dmsAnsweredUIM = false
    /// What the bring-up asked for the data path: the WDS clients that start calls are bound
    /// to this QMAP mux first (WDS Bind Mux Data Port).
    var muxDataPort: MuxDataPort?

    /// The time that releasing the clients and closing may take, whatever is left of the
    /// session's: client IDs left allocated stay allocated in the modem until it restarts.
    static let closeTimeout = ModemSession.cleanupTimeout

    private init(session: ModemSession, device: UnsafeMutablePointer<QmiDevice>) {
        port = session.port
        self.session = session
        self.device = device
    }

    /// Creates the QmiDevice and opens it in QMI mode (through qmi-proxy when `proxy`). Without
    /// asking for the services' version info (as qmicli): that round trip tells nothing that the
    /// first client allocation does not, which fails as clearly on a modem without the service.
    static func open(_ session: ModemSession, proxy: Bool) async throws(ModemError) -> QMIModem {
        let file = g_file_new_for_path(session.port.devicePath)
        defer { g_object_unref(gpointer(file)) }
        let device = try await session.call("open") { call in
            cqmi_device_new_no_file_check(file, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard let device = qmi_device_new_finish(result, &error) else { throw GLibError(taking: error) }
            return device
        }
        let modem = QMIModem(session: session, device: device)
        let flags = proxy ? QMI_DEVICE_OPEN_FLAGS_PROXY.rawValue : QMI_DEVICE_OPEN_FLAGS_NONE.rawValue
        do {
            try await session.call(proxy ? "open through qmi-proxy" : "open") { call in
                qmi_device_open(
                    device, QmiDeviceOpenFlags(rawValue: flags), session.libraryTimeout, call.cancellable,
                    call.callback, call.userData)
            } finish: { result throws(GLibError) in
                var error: UnsafeMutablePointer<GError>?
                guard qmi_device_open_finish(device, result, &error) != 0 else { throw GLibError(taking: error) }
            }
        } catch {
            await modem.close()
            throw error
        }
        session.logger.debug("\(session.port.name): QMI session open\(proxy ? " through qmi-proxy" : "")")
        return modem
    }

    func renewTimeLimit() async { session = session.renewed() }

    func close() async {
        guard isOpen else { return }
        isOpen = false
        // A task of its own: the caller's may be cancelled, and the client IDs must go back anyway.
        await Task { @GLibActor in await self.releaseAndClose() }.value
    }

    private func releaseAndClose() async {
        for release in releases { await release.value }
        releases = []
        ipv6SetUp?.cancel()
        _ = await ipv6SetUp?.value
        indicationRegistration?.cancel()
        await indicationRegistration?.value
        for (client, handler) in indicationHandlers { g_signal_handler_disconnect(gpointer(client), handler) }
        indicationHandlers = []
        indicationSink?.finish()
        let cleanup = session.cleanup(timeout: Self.closeTimeout)
        await withTaskGroup(of: Void.self) { group in
            for (service, client) in clients {
                let bound = LoopBound(client), keep = client == keptClient || client == keptIPv6Client
                group.addTask { await self.release(service, bound, cleanup, keepingID: keep) }
            }
        }
        clients = []
        for client in followedCalls { await release(QMI_SERVICE_WDS, LoopBound(client), cleanup, keepingID: true) }
        followedCalls = []
        let device = device
        do throws(ModemError) {
            try await cleanup.call("close") { call in
                qmi_device_close_async(device, cleanup.libraryTimeout, call.cancellable, call.callback, call.userData)
            } finish: { result throws(GLibError) in
                var error: UnsafeMutablePointer<GError>?
                guard qmi_device_close_finish(device, result, &error) != 0 else { throw GLibError(taking: error) }
            }
        } catch {
            cleanup.logger.debug("\(error.message)")
        }
        g_object_unref(gpointer(device))
    }

    /// The DMS and NAS clients go back (their indications stop: once attached, registration
    /// changes no longer matter to a bring-up); the WDS client stays for the call.
    func releaseCheckClients() async {
        await indicationRegistration?.value  // answered with the first reads
        let idle = clients.filter { $0.service != QMI_SERVICE_WDS }
        guard !idle.isEmpty else { return }
        for (client, handler) in indicationHandlers where idle.contains(where: { $0.client == client }) {
            g_signal_handler_disconnect(gpointer(client), handler)
        }
        indicationHandlers.removeAll { handler in idle.contains { $0.client == handler.client } }
        clients.removeAll { $0.service != QMI_SERVICE_WDS }
        let cleanup = session.cleanup(timeout: Self.closeTimeout)
        await withTaskGroup(of: Void.self) { group in
            for (service, client) in idle {
                let bound = LoopBound(client)
                group.addTask { await self.release(service, bound, cleanup) }
            }
        }
    }

    /// Gives the client's ID back to the modem (unless `keepingID`: the call's WDS client) and
    /// drops the client.
    private func release(
        _ service: QmiService, _ bound: LoopBound<UnsafeMutablePointer<QmiClient>>, _ cleanup: ModemSession,
        keepingID: Bool = false
    ) async {
        let device = device, client = bound.pointer
        let name = Self.name(service), clientID = qmi_client_get_cid(client)
        let flags = keepingID ? QMI_DEVICE_RELEASE_CLIENT_FLAGS_NONE : QMI_DEVICE_RELEASE_CLIENT_FLAGS_RELEASE_CID
        do throws(ModemError) {
            try await cleanup.call("release the \(name) client ID \(clientID)") { call in
                qmi_device_release_client(
                    device, client, flags, cleanup.libraryTimeout, call.cancellable, call.callback, call.userData)
            } finish: { result throws(GLibError) in
                var error: UnsafeMutablePointer<GError>?
                guard qmi_device_release_client_finish(device, result, &error) != 0 else {
                    throw GLibError(taking: error)
                }
            }
            cleanup.logger.debug(
                "\(port.name): \(name) client ID \(clientID) \(keepingID ? "kept allocated for the call it started" : "released")"
            )
        } catch {
            cleanup.logger.warning("\(error.message): it stays allocated in the modem until the modem restarts")
        }
        g_object_unref(gpointer(client))
    }

    // MARK: Reads

    /// The four DMS reads go out together: one round trip.
    func identity() async throws(ModemError) -> ModemIdentity {
        async let imei = ModemResult.of { @GLibActor () async throws(ModemError) in
            let ids = try await self.request(
                "get the device IDs", QMI_SERVICE_DMS,
                start: { client, timeout, call in
                    qmi_client_dms_get_ids(
                        cqmi_client_dms(client), nil, timeout, call.cancellable, call.callback, call.userData)
                },
                finish: { client, result, error in
                    qmi_client_dms_get_ids_finish(cqmi_client_dms(client), result, error)
                },
                result: qmi_message_dms_get_ids_output_get_result, unref: qmi_message_dms_get_ids_output_unref)!
            return ids.string { qmi_message_dms_get_ids_output_get_imei(ids.pointer, $0, nil) }
        }
        async let manufacturer = ModemResult.of { @GLibActor () async throws(ModemError) in
            let manufacturer = try await self.request(
                "get the manufacturer", QMI_SERVICE_DMS,
                start: { client, timeout, call in
                    qmi_client_dms_get_manufacturer(
                        cqmi_client_dms(client), nil, timeout, call.cancellable, call.callback, call.userData)
                },
                finish: { client, result, error in
                    qmi_client_dms_get_manufacturer_finish(cqmi_client_dms(client), result, error)
                },
                result: qmi_message_dms_get_manufacturer_output_get_result,
                unref: qmi_message_dms_get_manufacturer_output_unref)!
            return manufacturer.string {
                qmi_message_dms_get_manufacturer_output_get_manufacturer(manufacturer.pointer, $0, nil)
            }
        }
        async let model = ModemResult.of { @GLibActor () async throws(ModemError) in
            let model = try await self.request(
                "get the model", QMI_SERVICE_DMS,
                start: { client, timeout, call in
                    qmi_client_dms_get_model(
                        cqmi_client_dms(client), nil, timeout, call.cancellable, call.callback, call.userData)
                },
                finish: { client, result, error in
                    qmi_client_dms_get_model_finish(cqmi_client_dms(client), result, error)
                },
                result: qmi_message_dms_get_model_output_get_result, unref: qmi_message_dms_get_model_output_unref)!
            return model.string { qmi_message_dms_get_model_output_get_model(model.pointer, $0, nil) }
        }
        async let firmware = ModemResult.of { @GLibActor () async throws(ModemError) in
            let revision = try await self.request(
                "get the revision", QMI_SERVICE_DMS,
                start: { client, timeout, call in
                    qmi_client_dms_get_revision(
                        cqmi_client_dms(client), nil, timeout, call.cancellable, call.callback, call.userData)
                },
                finish: { client, result, error in
                    qmi_client_dms_get_revision_finish(cqmi_client_dms(client), result, error)
                },
                result: qmi_message_dms_get_revision_output_get_result,
                unref: qmi_message_dms_get_revision_output_unref)!
            return revision.string { qmi_message_dms_get_revision_output_get_revision(revision.pointer, $0, nil) }
        }
        // The first failure in the order they were read one after the other before.
        let ids = await imei, made = await manufacturer, named = await model, revision = await firmware
        let imeiText = try ids.get()
        return ModemIdentity(
            manufacturer: try made.get(), model: try named.get(), firmware: try revision.get(), imei: imeiText)
    }

    func sim() async throws(ModemError) -> SIMStatus {
        guard var sim = try await pinStatus() else { return SIMStatus(state: .absent) }
        if simThroughUIM {
            try await uimIdentities(into: &sim)
            try await readMSISDN(into: &sim)
            return sim
        }
        let locked = [
            QMI_PROTOCOL_ERROR_UIM_UNINITIALIZED, QMI_PROTOCOL_ERROR_PIN_RESTRICTION,
            QMI_PROTOCOL_ERROR_DEVICE_NOT_READY
        ]
        if let iccid = try await request(
            "get the ICCID", QMI_SERVICE_DMS, states: locked,
            start: { client, timeout, call in
                qmi_client_dms_uim_get_iccid(
                    cqmi_client_dms(client), nil, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_dms_uim_get_iccid_finish(cqmi_client_dms(client), result, error)
            },
            result: qmi_message_dms_uim_get_iccid_output_get_result, unref: qmi_message_dms_uim_get_iccid_output_unref)
        {
            sim.iccid = iccid.string { qmi_message_dms_uim_get_iccid_output_get_iccid(iccid.pointer, $0, nil) }
        }
        if let imsi = try await request(
            "get the IMSI", QMI_SERVICE_DMS, states: locked,
            start: { client, timeout, call in
                qmi_client_dms_uim_get_imsi(
                    cqmi_client_dms(client), nil, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_dms_uim_get_imsi_finish(cqmi_client_dms(client), result, error)
            },
            result: qmi_message_dms_uim_get_imsi_output_get_result, unref: qmi_message_dms_uim_get_imsi_output_unref)
        {
            sim.imsi = imsi.string { qmi_message_dms_uim_get_imsi_output_get_imsi(imsi.pointer, $0, nil) }
        }
        try await readMSISDN(into: &sim)
        return sim
    }

    /// The MSISDN (DMS Get MSISDN, which UIM-only firmware serves too), when the SIM has one.
    private func readMSISDN(into sim: inout SIMStatus) async throws(ModemError) {
        let locked = [
            QMI_PROTOCOL_ERROR_UIM_UNINITIALIZED, QMI_PROTOCOL_ERROR_PIN_RESTRICTION,
            QMI_PROTOCOL_ERROR_DEVICE_NOT_READY
        ]
        if let msisdn = try await request(
            "get the MSISDN", QMI_SERVICE_DMS, states: locked + [QMI_PROTOCOL_ERROR_NOT_PROVISIONED],
            start: { client, timeout, call in
                qmi_client_dms_get_msisdn(
                    cqmi_client_dms(client), nil, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in qmi_client_dms_get_msisdn_finish(cqmi_client_dms(client), result, error)
            },
            result: qmi_message_dms_get_msisdn_output_get_result, unref: qmi_message_dms_get_msisdn_output_unref)
        {
            sim.msisdns =
                msisdn.string { qmi_message_dms_get_msisdn_output_get_msisdn(msisdn.pointer, $0, nil) }.map { [$0] }
                ?? []
        }
    }

    /// The PIN status alone: it tells whether there is a SIM and whether it is locked.
    func simState() async throws(ModemError) -> SIMStatus {
        try await pinStatus() ?? SIMStatus(state: .absent)
    }

    /// The SIM's state from PIN1's status (and its retries while locked), through DMS or, on
    /// firmware that refuses it there, UIM's card status; nil without a SIM.
    private func pinStatus() async throws(ModemError) -> SIMStatus? {
        try await throughDMSOrUIM(
            dms: { () async throws(ModemError) in try await dmsPINStatus() },
            uim: { () async throws(ModemError) in try await uimCardStatus() })
    }

    /// DMS UIM Get PIN Status; nil without a SIM.
    private func dmsPINStatus() async throws(ModemError) -> SIMStatus? {
        guard
            let pin = try await request(
                "get the PIN status", QMI_SERVICE_DMS, states: [QMI_PROTOCOL_ERROR_UIM_UNINITIALIZED],
                start: { client, timeout, call in
                    qmi_client_dms_uim_get_pin_status(
                        cqmi_client_dms(client), nil, timeout, call.cancellable, call.callback, call.userData)
                },
                finish: { client, result, error in
                    qmi_client_dms_uim_get_pin_status_finish(cqmi_client_dms(client), result, error)
                },
                result: qmi_message_dms_uim_get_pin_status_output_get_result,
                unref: qmi_message_dms_uim_get_pin_status_output_unref)
        else { return nil }
        var sim = SIMStatus(state: .ready)
        var status = QMI_DMS_UIM_PIN_STATUS_NOT_INITIALIZED
        var retries: UInt8 = 0
        if qmi_message_dms_uim_get_pin_status_output_get_pin1_status(pin.pointer, &status, &retries, nil, nil) != 0 {
            switch status {
            case QMI_DMS_UIM_PIN_STATUS_ENABLED_NOT_VERIFIED:
                sim.state = .pinRequired
                sim.pinRetries = Int(retries)
            case QMI_DMS_UIM_PIN_STATUS_BLOCKED: sim.state = .pukRequired
            case QMI_DMS_UIM_PIN_STATUS_PERMANENTLY_BLOCKED: sim.state = .failed
            case QMI_DMS_UIM_PIN_STATUS_NOT_INITIALIZED: sim.state = .notReady
            default: sim.state = .ready
            }
        }
        return sim
    }

    func radio() async throws(ModemError) -> RadioState {
        let output = try await request(
            "get the operating mode", QMI_SERVICE_DMS,
            start: { client, timeout, call in
                qmi_client_dms_get_operating_mode(
                    cqmi_client_dms(client), nil, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_dms_get_operating_mode_finish(cqmi_client_dms(client), result, error)
            },
            result: qmi_message_dms_get_operating_mode_output_get_result,
            unref: qmi_message_dms_get_operating_mode_output_unref)!
        var mode = QMI_DMS_OPERATING_MODE_UNKNOWN
        _ = qmi_message_dms_get_operating_mode_output_get_mode(output.pointer, &mode, nil)
        return mode == QMI_DMS_OPERATING_MODE_ONLINE ? .on : .off
    }

    func homeOperator() async throws(ModemError) -> NetworkOperator? {
        guard
            let output = try await request(
                "get the home network", QMI_SERVICE_NAS,
                states: [
                    QMI_PROTOCOL_ERROR_UIM_UNINITIALIZED, QMI_PROTOCOL_ERROR_PIN_RESTRICTION,
                    QMI_PROTOCOL_ERROR_DEVICE_NOT_READY
                ],
                start: { client, timeout, call in
                    qmi_client_nas_get_home_network(
                        cqmi_client_nas(client), nil, timeout, call.cancellable, call.callback, call.userData)
                },
                finish: { client, result, error in
                    qmi_client_nas_get_home_network_finish(cqmi_client_nas(client), result, error)
                },
                result: qmi_message_nas_get_home_network_output_get_result,
                unref: qmi_message_nas_get_home_network_output_unref)
        else { return nil }
        var mcc: UInt16 = 0, mnc: UInt16 = 0
        var description: UnsafePointer<gchar>?
        guard
            qmi_message_nas_get_home_network_output_get_home_network(output.pointer, &mcc, &mnc, &description, nil) != 0
        else {
            return nil
        }
        var is3GPP: gboolean = 0, threeDigits: gboolean = 0
        _ = qmi_message_nas_get_home_network_output_get_home_network_3gpp_mnc(
            output.pointer, &is3GPP, &threeDigits, nil)
        return NetworkOperator(
            id: NetworkOperator.plmnID(mcc: Int(mcc), mnc: Int(mnc), threeDigitMNC: threeDigits != 0),
            name: string(description))
    }

    func registration() async throws(ModemError) -> Registration {
        let output = try await servingSystem()
        var state = QMI_NAS_REGISTRATION_STATE_UNKNOWN
        var interfaces: UnsafeMutablePointer<GArray>?
        _ = qmi_message_nas_get_serving_system_output_get_serving_system(
            output.pointer, &state, nil, nil, nil, &interfaces, nil)
        var roaming = QMI_NAS_ROAMING_INDICATOR_STATUS_OFF
        _ = qmi_message_nas_get_serving_system_output_get_roaming_indicator(output.pointer, &roaming, nil)
        var mcc: UInt16 = 0, mnc: UInt16 = 0
        var description: UnsafePointer<gchar>?
        let hasPLMN =
            qmi_message_nas_get_serving_system_output_get_current_plmn(output.pointer, &mcc, &mnc, &description, nil)
            != 0
        var threeDigits: gboolean = 0
        _ = qmi_message_nas_get_serving_system_output_get_mnc_pcs_digit_include_status(
            output.pointer, nil, nil, &threeDigits, nil)
        return Self.registration(
            state, roaming: roaming, plmn: hasPLMN ? (mcc, mnc, threeDigits != 0, string(description)) : nil,
            interfaces: interfaces)
    }

    /// A serving system (of a response or an indication) as a `Registration`.
    nonisolated static func registration(
        _ state: QmiNasRegistrationState, roaming: QmiNasRoamingIndicatorStatus,
        plmn: (mcc: UInt16, mnc: UInt16, threeDigits: Bool, name: String?)?,
        interfaces: UnsafeMutablePointer<GArray>?
    ) -> Registration {
        var registration = Registration(state: .unknown)
        switch state {
        case QMI_NAS_REGISTRATION_STATE_REGISTERED:
            registration.state = roaming == QMI_NAS_ROAMING_INDICATOR_STATUS_ON ? .roaming : .home
        case QMI_NAS_REGISTRATION_STATE_NOT_REGISTERED_SEARCHING: registration.state = .searching
        case QMI_NAS_REGISTRATION_STATE_REGISTRATION_DENIED: registration.state = .denied
        case QMI_NAS_REGISTRATION_STATE_NOT_REGISTERED: registration.state = .notRegistered
        default: registration.state = .unknown
        }
        guard registration.isRegistered else { return registration }
        if let plmn {
            registration.servingOperator = NetworkOperator(
                id: NetworkOperator.plmnID(mcc: Int(plmn.mcc), mnc: Int(plmn.mnc), threeDigitMNC: plmn.threeDigits),
                name: plmn.name)
        }
        if let interfaces {
            let values =
                UnsafeRawPointer(interfaces.pointee.data).map {
                    Array(
                        UnsafeBufferPointer(
                            start: $0.assumingMemoryBound(to: QmiNasRadioInterface.self),
                            count: Int(interfaces.pointee.len)))
                } ?? []
            registration.accessTechnology = technology(values)
        }
        return registration
    }

    func signal() async throws(ModemError) -> Signal? {
        guard
            let output = try await request(
                "get the signal strength", QMI_SERVICE_NAS, states: [QMI_PROTOCOL_ERROR_NO_NETWORK_FOUND],
                start: { client, timeout, call in
                    qmi_client_nas_get_signal_strength(
                        cqmi_client_nas(client), nil, timeout, call.cancellable, call.callback, call.userData)
                },
                finish: { client, result, error in
                    qmi_client_nas_get_signal_strength_finish(cqmi_client_nas(client), result, error)
                },
                result: qmi_message_nas_get_signal_strength_output_get_result,
                unref: qmi_message_nas_get_signal_strength_output_unref)
        else { return nil }
        var signal = Signal()
        var strength: Int8 = 0
        if qmi_message_nas_get_signal_strength_output_get_signal_strength(output.pointer, &strength, nil, nil) != 0 {
            signal.rssiDbm = Int(strength)
        }
        var rsrp: Int16 = 0
        if qmi_message_nas_get_signal_strength_output_get_lte_rsrp(output.pointer, &rsrp, nil) != 0 {
            signal.rsrpDbm = Int(rsrp)
        }
        var rsrq: Int8 = 0
        if qmi_message_nas_get_signal_strength_output_get_rsrq(output.pointer, &rsrq, nil, nil) != 0 {
            signal.rsrqDb = Int(rsrq)
        }
        var snr: Int16 = 0
        if qmi_message_nas_get_signal_strength_output_get_lte_snr(output.pointer, &snr, nil) != 0 {
            signal.snrDb = Double(snr) / 10
        }
        return signal
    }

    func packetService() async throws(ModemError) -> PacketServiceState {
        let output = try await servingSystem()
        var attach = QMI_NAS_ATTACH_STATE_UNKNOWN
        _ = qmi_message_nas_get_serving_system_output_get_serving_system(
            output.pointer, nil, nil, &attach, nil, nil, nil)
        return Self.packetService(attach)
    }

    nonisolated static func packetService(_ attach: QmiNasAttachState) -> PacketServiceState {
        switch attach {
        case QMI_NAS_ATTACH_STATE_ATTACHED: .attached
        case QMI_NAS_ATTACH_STATE_DETACHED: .detached
        default: .unknown
        }
    }

    /// The packet data call's state and, while connected, its settings.
    func bearer() async throws(ModemError) -> BearerStatus {
        let state = try await bearerState()
        return state == .connected ? try await ipConfiguration() : BearerStatus(state: state)
    }

    func bearerState() async throws(ModemError) -> BearerState {
        let status = try await request(
            "get the packet service status", QMI_SERVICE_WDS,
            start: { client, timeout, call in
                qmi_client_wds_get_packet_service_status(
                    cqmi_client_wds(client), nil, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_wds_get_packet_service_status_finish(cqmi_client_wds(client), result, error)
            },
            result: qmi_message_wds_get_packet_service_status_output_get_result,
            unref: qmi_message_wds_get_packet_service_status_output_unref)!
        var connection = QMI_WDS_CONNECTION_STATUS_UNKNOWN
        _ = qmi_message_wds_get_packet_service_status_output_get_connection_status(status.pointer, &connection, nil)
        return Self.bearerState(connection)
    }

    func ipConfiguration() async throws(ModemError) -> BearerStatus {
        var bearer = BearerStatus(state: .connected)
        try await readSettings(into: &bearer)
        return bearer
    }

    nonisolated static func bearerState(_ connection: QmiWdsConnectionStatus) -> BearerState {
        switch connection {
        case QMI_WDS_CONNECTION_STATUS_CONNECTED, QMI_WDS_CONNECTION_STATUS_SUSPENDED: .connected
        case QMI_WDS_CONNECTION_STATUS_AUTHENTICATING: .connecting
        case QMI_WDS_CONNECTION_STATUS_DISCONNECTED: .disconnected
        default: .unknown
        }
    }

    /// The IPv4 settings from the WDS client (whose IP family is the default, IPv4) and, when
    /// IPv6 is expected, the IPv6 settings from the IPv6 client, asked together (one round
    /// trip); when it is not, the IPv6 settings only if the call has no IPv4.
    private func readSettings(into bearer: inout BearerStatus) async throws(ModemError) {
        var ipv6 = BearerStatus(state: .connected)
        if expectsIPv6 {
            async let ipv4Read = ModemResult.of { @GLibActor () async throws(ModemError) in
                var ipv4 = BearerStatus(state: .connected)
                try await self.readSettings(on: try await self.client(QMI_SERVICE_WDS), into: &ipv4)
                return ipv4
            }
            async let ipv6Read = ModemResult.of { @GLibActor () async throws(ModemError) in
                var ipv6 = BearerStatus(state: .connected)
                try await self.readSettings(on: try await self.ipv6WDSClient(), into: &ipv6)
                return ipv6
            }
            let ipv4 = await ipv4Read, ipv6Status = await ipv6Read
            bearer = try ipv4.get()
            ipv6 = try ipv6Status.get()
        } else {
            try await readSettings(on: try await client(QMI_SERVICE_WDS), into: &bearer)
            guard bearer.ipv4Address == nil else { return }
            try await readSettings(on: try await ipv6WDSClient(), into: &ipv6)
        }
        guard ipv6.ipv6Address != nil else { return }
        bearer.ipv6Address = ipv6.ipv6Address
        bearer.ipv6PrefixLength = ipv6.ipv6PrefixLength
        bearer.ipv6Gateway = ipv6.ipv6Gateway
        bearer.apn = bearer.apn ?? ipv6.apn
        bearer.mtu = bearer.mtu ?? ipv6.mtu
        bearer.dnsServers += ipv6.dnsServers.filter { !bearer.dnsServers.contains($0) }
    }

    /// One Get Current Settings on `client`: what the call of the client's IP family has.
    private func readSettings(
        on client: UnsafeMutablePointer<QmiClient>, into bearer: inout BearerStatus
    ) async throws(ModemError) {
        let input = qmi_message_wds_get_current_settings_input_new()
        defer { qmi_message_wds_get_current_settings_input_unref(input) }
        let wanted = [
            QMI_WDS_REQUESTED_SETTINGS_APN_NAME, QMI_WDS_REQUESTED_SETTINGS_DNS_ADDRESS,
            QMI_WDS_REQUESTED_SETTINGS_IP_ADDRESS,
            QMI_WDS_REQUESTED_SETTINGS_GATEWAY_INFO, QMI_WDS_REQUESTED_SETTINGS_MTU,
            QMI_WDS_REQUESTED_SETTINGS_IP_FAMILY
        ]
        _ = qmi_message_wds_get_current_settings_input_set_requested_settings(
            input, QmiWdsRequestedSettings(rawValue: wanted.reduce(0) { $0 | $1.rawValue }), nil)
        let operation = "get the current settings"
        let (settings, failure) = try await exchange(
            operation, client, session: session,
            start: { client, timeout, call in
                qmi_client_wds_get_current_settings(
                    cqmi_client_wds(client), input, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_wds_get_current_settings_finish(cqmi_client_wds(client), result, error)
            },
            result: qmi_message_wds_get_current_settings_output_get_result,
            unref: qmi_message_wds_get_current_settings_output_unref)
        if let failure {
            if failure.domain == qmi_protocol_error_quark(),
                failure.code == Int32(QMI_PROTOCOL_ERROR_OUT_OF_CALL.rawValue)
            {
                return
            }
            throw session.error(operation, failure)
        }
        let output = settings.pointer
        bearer.apn = settings.string { qmi_message_wds_get_current_settings_output_get_apn_name(output, $0, nil) }
        var value: UInt32 = 0
        if qmi_message_wds_get_current_settings_output_get_ipv4_address(output, &value, nil) != 0 {
            bearer.ipv4Address = Self.text(value)
        }
        if qmi_message_wds_get_current_settings_output_get_ipv4_gateway_subnet_mask(output, &value, nil) != 0 {
            bearer.prefixLength = value.nonzeroBitCount
        }
        if qmi_message_wds_get_current_settings_output_get_ipv4_gateway_address(output, &value, nil) != 0 {
            bearer.gateway = Self.text(value)
        }
        if qmi_message_wds_get_current_settings_output_get_primary_ipv4_dns_address(output, &value, nil) != 0 {
            bearer.dnsServers.append(Self.text(value))
        }
        if qmi_message_wds_get_current_settings_output_get_secondary_ipv4_dns_address(output, &value, nil) != 0 {
            bearer.dnsServers.append(Self.text(value))
        }
        var array: UnsafeMutablePointer<GArray>?, prefix: UInt8 = 0
        if qmi_message_wds_get_current_settings_output_get_ipv6_address(output, &array, &prefix, nil) != 0,
            let address = Self.text(array)
        {
            bearer.ipv6Address = address
            bearer.ipv6PrefixLength = Int(prefix)
        }
        if qmi_message_wds_get_current_settings_output_get_ipv6_gateway_address(output, &array, &prefix, nil) != 0 {
            bearer.ipv6Gateway = Self.text(array)
        }
        for read in [
            qmi_message_wds_get_current_settings_output_get_ipv6_primary_dns_address,
            qmi_message_wds_get_current_settings_output_get_ipv6_secondary_dns_address
        ] {
            if read(output, &array, nil) != 0, let server = Self.text(array) { bearer.dnsServers.append(server) }
        }
        if qmi_message_wds_get_current_settings_output_get_mtu(output, &value, nil) != 0, value > 0 {
            bearer.mtu = Int(value)
        }
    }

    /// An IPv6 address as libqmi gives it (8 groups of 16 bits in host order); nil when absent
    /// or unspecified.
    nonisolated static func text(_ groups: UnsafeMutablePointer<GArray>?) -> String? {
        guard let groups, groups.pointee.len == 8, let data = groups.pointee.data else { return nil }
        let words = UnsafeRawPointer(data).assumingMemoryBound(to: UInt16.self)
        let bytes = (0 ..< 8).flatMap { [UInt8(words[$0] >> 8), UInt8(words[$0] & 0xff)] }
        return bytes.allSatisfy({ $0 == 0 }) ? nil : ipv6Text(bytes)
    }

    /// The IPv6 WDS client, allocated and set to IP family 6 on first use (or as `plan` asked).
    func ipv6WDSClient() async throws(ModemError) -> UnsafeMutablePointer<QmiClient> {
        let setUp = ipv6SetUp ?? setUpIPv6Client(sent: nil)
        return try await setUp.value.get().pointer
    }

    /// Starts the IPv6 client's set-up: its allocation unless done, then Set IP Family 6;
    /// `sent` is signalled once that request is on its way (or the set-up failed before).
    @discardableResult
    func setUpIPv6Client(
        sent: SentSignal?
    ) -> Task<Result<LoopBound<UnsafeMutablePointer<QmiClient>>, ModemError>, Never> {
        let setUp = Task { @GLibActor () -> Result<LoopBound<UnsafeMutablePointer<QmiClient>>, ModemError> in
            defer { sent?.signal() }
            do throws(ModemError) {
                let client = try await self.allocateIPv6Client()
                try await self.setIPv6Family(client, sent: sent)
                return .success(LoopBound(client))
            } catch {
                return .failure(error)
            }
        }
        ipv6SetUp = setUp
        return setUp
    }

    /// A second WDS client ID, for IPv6.
    func allocateIPv6Client() async throws(ModemError) -> UnsafeMutablePointer<QmiClient> {
        if let ipv6Client { return ipv6Client }
        let operation = "allocate a WDS client ID for IPv6"
        let device = device, timeout = session.libraryTimeout(allowing: Self.closeTimeout)
        let client = try await session.call(operation, extraTime: Self.closeTimeout) { call in
            qmi_device_allocate_client(
                device, QMI_SERVICE_WDS, UInt8(QMI_CID_NONE), timeout, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard let client = qmi_device_allocate_client_finish(device, result, &error) else {
                throw GLibError(taking: error)
            }
            return client
        }
        clients.append((QMI_SERVICE_WDS, client))
        ipv6Client = client
        session.logger.debug("\(port.name): WDS client ID \(qmi_client_get_cid(client)) allocated for IPv6")
        return client
    }

    /// WDS Set IP Family 6 on the IPv6 client.
    private func setIPv6Family(_ client: UnsafeMutablePointer<QmiClient>, sent: SentSignal?) async throws(ModemError) {
        let operation = "set the IP family of the IPv6 client"
        let input = qmi_message_wds_set_ip_family_input_new()
        defer { qmi_message_wds_set_ip_family_input_unref(input) }
        _ = qmi_message_wds_set_ip_family_input_set_preference(input, QMI_WDS_IP_FAMILY_IPV6, nil)
        let (_, failure) = try await exchange(
            operation, client, session: session,
            start: { client, timeout, call in
                qmi_client_wds_set_ip_family(
                    cqmi_client_wds(client), input, timeout, call.cancellable, call.callback, call.userData)
                sent?.signal()
            },
            finish: { client, result, error in
                qmi_client_wds_set_ip_family_finish(cqmi_client_wds(client), result, error)
            },
            result: qmi_message_wds_set_ip_family_output_get_result, unref: qmi_message_wds_set_ip_family_output_unref)
        if let failure { throw session.error(operation, failure) }
    }

    /// Gives the IPv6 client's ID back at once, beside the next request, when its call was
    /// refused: the bearer then has no IPv6 to read.
    func releaseUnusedIPv6Client() {
        guard let client = ipv6Client, client != keptIPv6Client else { return }
        ipv6Client = nil
        ipv6SetUp = nil
        expectsIPv6 = false
        clients.removeAll { $0.client == client }
        let bound = LoopBound(client), cleanup = session.cleanup(timeout: Self.closeTimeout)
        releases.append(Task { @GLibActor in await self.release(QMI_SERVICE_WDS, bound, cleanup) })
    }

    /// Takes in what a bring-up plans, before `indications()` allocates the clients.
    func plan(_ ipType: BearerIPType, readsDataFormat: Bool) async {
        await expect(ipType)
        plansIPv6 = ipType.includesIPv6
        plansDataFormat = readsDataFormat
    }

    /// Whether reading the settings asks for IPv6 too: the families the bearer is expected to have.
    func expect(_ ipType: BearerIPType) async {
        expectsIPv6 = expectsIPv6 || ipType.includesIPv6
    }

    private func servingSystem() async throws(ModemError) -> Output {
        try await request(
            "get the serving system", QMI_SERVICE_NAS,
            start: { client, timeout, call in
                qmi_client_nas_get_serving_system(
                    cqmi_client_nas(client), nil, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_nas_get_serving_system_finish(cqmi_client_nas(client), result, error)
            },
            result: qmi_message_nas_get_serving_system_output_get_result,
            unref: qmi_message_nas_get_serving_system_output_unref)!
    }

    // MARK: Requests

    /// A QMI response message (a libqmi `…Output`), released with its last reference.
    final class Output {
        let pointer: OpaquePointer
        private let unref: (OpaquePointer) -> Void

        init(_ pointer: OpaquePointer, unref: @escaping (OpaquePointer) -> Void) {
            self.pointer = pointer
            self.unref = unref
        }

        deinit { unref(pointer) }

        /// A string TLV that `read` gets (owned by the output), copied; nil when absent or empty.
        func string(_ read: (UnsafeMutablePointer<UnsafePointer<gchar>?>) -> gboolean) -> String? {
            var text: UnsafePointer<gchar>?
            guard read(&text) != 0 else { return nil }
            return Modems.string(text)
        }
    }

    typealias ErrorOut = UnsafeMutablePointer<UnsafeMutablePointer<GError>?>

    /// Sends one request on `service`'s client: `start` sends it, `finish` is its `_finish`,
    /// `result` its output's `get_result`. Returns the output, or nil when the modem answered one
    /// of `states`: errors that describe a state (no SIM, SIM locked, no network) rather than a
    /// failure. `session` gives the time limit (default: the modem's session).
    func request(
        _ operation: String, _ service: QmiService, states: [QmiProtocolError] = [], session: ModemSession? = nil,
        start: (UnsafeMutablePointer<QmiClient>, UInt32, GLibAsyncArguments) -> Void,
        finish: (UnsafeMutablePointer<QmiClient>, OpaquePointer, ErrorOut) -> OpaquePointer?,
        result: (OpaquePointer, ErrorOut) -> gboolean,
        unref: @escaping (OpaquePointer) -> Void
    ) async throws(ModemError) -> Output? {
        let session = session ?? self.session
        let client = try await client(service, session: session)
        let (output, failure) = try await exchange(
            operation, client, session: session, start: start, finish: finish,
            result: result, unref: unref)
        guard let failure else { return output }
        if failure.domain == qmi_protocol_error_quark(),
            states.contains(where: { Int32(bitPattern: $0.rawValue) == failure.code })
        {
            return nil
        }
        throw session.error(operation, failure)
    }

    /// Sends one request on `client` and returns its output with the error it carries (nil on
    /// success): a failed Start Network still says the call end reason. Without `followingTask`,
    /// the request is sent only before the deadline, is not given up when the task is cancelled,
    /// and its answer is awaited up to `closeTimeout` past the deadline: a call the modem may
    /// have started must be known to be undone.
    func exchange(
        _ operation: String, _ client: UnsafeMutablePointer<QmiClient>, session: ModemSession,
        followingTask: Bool = true,
        start: (UnsafeMutablePointer<QmiClient>, UInt32, GLibAsyncArguments) -> Void,
        finish: (UnsafeMutablePointer<QmiClient>, OpaquePointer, ErrorOut) -> OpaquePointer?,
        result: (OpaquePointer, ErrorOut) -> gboolean,
        unref: @escaping (OpaquePointer) -> Void
    ) async throws(ModemError) -> (Output, GLibError?) {
        if !followingTask, session.secondsLeft <= 0 { throw session.timedOut(operation) }
        let timeout = followingTask ? session.libraryTimeout : session.libraryTimeout(allowing: Self.closeTimeout)
        let output = try await session.call(operation, extraTime: followingTask ? nil : Self.closeTimeout) { call in
            start(client, timeout, call)
        } finish: { response throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard let output = finish(client, response, &error) else { throw GLibError(taking: error) }
            return Output(output, unref: unref)
        }
        var error: UnsafeMutablePointer<GError>?
        if result(output.pointer, &error) != 0 { return (output, nil) }
        return (output, GLibError(taking: error))
    }

    /// The client of `service`, allocated (a client ID from the modem) on first use. The
    /// allocation runs to its end even past the deadline or when the task is cancelled (for at
    /// most `closeTimeout` more): an answer given up on would leave its ID allocated in the modem
    /// with nobody to release it. For a clean-up `session` (undoing after a cancel), neither the
    /// cancel nor the session's deadline stop it.
    func client(
        _ service: QmiService, session: ModemSession? = nil
    ) async throws(ModemError) -> UnsafeMutablePointer<QmiClient> {
        let session = session ?? self.session
        // Requests sent together need the same client: one allocation per service, the others wait for it.
        var waited = false
        while allocating[service.rawValue] != nil {
            waited = true
            await withCheckedContinuation { allocating[service.rawValue]?.append($0) }
        }
        let operation = "allocate a \(Self.name(service)) client ID"
        if let existing = clients.first(where: { $0.service == service && $0.client != ipv6Client }) {
            // A client that came after a cancel or after the time ran out fails its waiters as it
            // failed its allocator: requests sent together report the same first failure.
            if waited, !session.isCleanup {
                if Task.isCancelled { throw session.cancelled(operation) }
                if session.secondsLeft <= 0 { throw session.timedOut(operation) }
            }
            return existing.client
        }
        allocating[service.rawValue] = []
        defer { allocating.removeValue(forKey: service.rawValue)?.forEach { $0.resume() } }
        let device = device, timeout = session.libraryTimeout(allowing: Self.closeTimeout)
        let client = try await session.call(operation, extraTime: Self.closeTimeout) { call in
            qmi_device_allocate_client(
                device, service, UInt8(QMI_CID_NONE), timeout, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard let client = qmi_device_allocate_client_finish(device, result, &error) else {
                throw GLibError(taking: error)
            }
            return client
        }
        clients.append((service, client))
        session.logger.debug("\(port.name): \(Self.name(service)) client ID \(qmi_client_get_cid(client)) allocated")
        guard !session.isCleanup else { return client }
        if Task.isCancelled {
            throw session.cancelled(operation)
        }
        if session.secondsLeft <= 0 { throw session.timedOut(operation) }
        return client
    }

    nonisolated static func name(_ service: QmiService) -> String {
        qmi_service_get_string(service).map { String(cString: $0).uppercased() } ?? "service \(service.rawValue)"
    }

    /// The most capable technology among the serving system's radio interfaces.
    nonisolated static func technology(_ interfaces: [QmiNasRadioInterface]) -> AccessTechnology? {
        let ranked: [(QmiNasRadioInterface, AccessTechnology)] = [
            (QMI_NAS_RADIO_INTERFACE_5GNR, .nr5g), (QMI_NAS_RADIO_INTERFACE_LTE, .lte),
            (QMI_NAS_RADIO_INTERFACE_UMTS, .umts),
            (QMI_NAS_RADIO_INTERFACE_TD_SCDMA, .umts), (QMI_NAS_RADIO_INTERFACE_GSM, .gsm),
            (QMI_NAS_RADIO_INTERFACE_CDMA_1XEVDO, .cdma), (QMI_NAS_RADIO_INTERFACE_CDMA_1X, .cdma)
        ]
        if let match = ranked.first(where: { interfaces.contains($0.0) }) { return match.1 }
        return interfaces.contains(where: { $0 != QMI_NAS_RADIO_INTERFACE_NONE }) ? .other : nil
    }

    /// An IPv4 address as libqmi gives it (the first octet in the high byte).
    nonisolated static func text(_ address: UInt32) -> String {
        "\(address >> 24).\((address >> 16) & 0xff).\((address >> 8) & 0xff).\(address & 0xff)"
    }
}
