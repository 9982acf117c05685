import CGIO
import CQMI
import CellpathCore
import GLibRuntime

/// The SIM through the UIM service, for firmware that refuses DMS's old UIM commands
/// (InvalidQmiCommand, NotSupported), as ModemManager reads it there: Get Card Status, Read
/// Transparent of EF ICCID (2FE2 under the MF) and EF IMSI (6F07 under ADF USIM, 3F00/7FFF), and
/// Verify PIN, each on the primary GW provisioning session.
extension QMIModem {
    /// Whether `error` is DMS refusing a UIM command it does not serve.
    nonisolated static func refusesDMSUIM(_ error: ModemError) -> Bool {
        guard error.layer == .protocol, let status = error.status else { return false }
        return [QMI_PROTOCOL_ERROR_INVALID_QMI_COMMAND, QMI_PROTOCOL_ERROR_NOT_SUPPORTED].contains {
            qmi_protocol_error_get_string($0).map { String(cString: $0) } == status
        }
    }

    /// The data format (WDA) and whether DMS refused UIM commands, as far as this session knows.
    func firmwareTraits() async throws(ModemError) -> FirmwareTraits {
        let format = try await dataFormat()
        return FirmwareTraits(
            qmiRawIP: format.map { $0.linkLayer == .rawIP }, qmiDataAggregation: format?.qmap,
            qmiDMSUIMRefused: simThroughUIM ? true : dmsAnsweredUIM ? false : nil)
    }

    /// Runs `dms`, or `uim` once DMS refused a UIM command (remembered for the session).
    func throughDMSOrUIM<Value>(
        dms: () async throws(ModemError) -> Value, uim: () async throws(ModemError) -> Value
    ) async throws(ModemError) -> Value {
        if !simThroughUIM {
            do {
                let value = try await dms()
                dmsAnsweredUIM = true
                return value
            } catch  where Self.refusesDMSUIM(error) {
                session.logger.debug("\(port.name): DMS refuses UIM commands (\(error.status ?? "")): using UIM")
                simThroughUIM = true
            }
        }
        return try await uim()
    }

    /// The SIM's state from the card status: the card, then the primary GW application's state
    /// and PIN1; nil without a card.
    func uimCardStatus() async throws(ModemError) -> SIMStatus? {
        let output = try await request(
            "get the card status", QMI_SERVICE_UIM,
            start: { client, timeout, call in
                qmi_client_uim_get_card_status(
                    cqmi_client_uim(client), nil, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_uim_get_card_status_finish(cqmi_client_uim(client), result, error)
            },
            result: qmi_message_uim_get_card_status_output_get_result,
            unref: qmi_message_uim_get_card_status_output_unref)!
        var primary: UInt16 = 0xFFFF
        var cards: UnsafeMutablePointer<GArray>?
        guard
            qmi_message_uim_get_card_status_output_get_card_status(output.pointer, &primary, nil, nil, nil, &cards, nil)
                != 0, let cards, cards.pointee.len > 0, let data = cards.pointee.data
        else { return nil }
        typealias Card = QmiMessageUimGetCardStatusOutputCardStatusCardsElement
        typealias Application = QmiMessageUimGetCardStatusOutputCardStatusCardsElementApplicationsElement
        let cardIndex = primary == 0xFFFF ? 0 : Int(primary >> 8),
            appIndex = primary == 0xFFFF ? 0 : Int(primary & 0xff)
        guard cardIndex < Int(cards.pointee.len) else { return nil }
        let card = UnsafeRawPointer(data).assumingMemoryBound(to: Card.self)[cardIndex]
        switch card.card_state {
        case QMI_UIM_CARD_STATE_ABSENT: return nil
        case QMI_UIM_CARD_STATE_ERROR: return SIMStatus(state: .failed)
        default: break
        }
        guard let applications = card.applications, appIndex < Int(applications.pointee.len),
            let appData = applications.pointee.data
        else { return SIMStatus(state: .notReady) }
        let application = UnsafeRawPointer(appData).assumingMemoryBound(to: Application.self)[appIndex]
        return Self.simStatus(application.state, pin1: application.pin1_state, retries: application.pin1_retries)
    }

    /// A UIM application's state and PIN1 as a SIM status.
    nonisolated static func simStatus(
        _ state: QmiUimCardApplicationState, pin1: QmiUimPinState, retries: UInt8
    ) -> SIMStatus {
        switch pin1 {
        case QMI_UIM_PIN_STATE_ENABLED_NOT_VERIFIED: return SIMStatus(state: .pinRequired, pinRetries: Int(retries))
        case QMI_UIM_PIN_STATE_BLOCKED: return SIMStatus(state: .pukRequired)
        case QMI_UIM_PIN_STATE_PERMANENTLY_BLOCKED: return SIMStatus(state: .failed)
        default: break
        }
        switch state {
        case QMI_UIM_CARD_APPLICATION_STATE_READY: return SIMStatus(state: .ready)
        case QMI_UIM_CARD_APPLICATION_STATE_PIN1_OR_UPIN_PIN_REQUIRED:
            return SIMStatus(state: .pinRequired, pinRetries: Int(retries))
        case QMI_UIM_CARD_APPLICATION_STATE_PUK1_OR_UPIN_PUK_REQUIRED, QMI_UIM_CARD_APPLICATION_STATE_PIN1_BLOCKED:
            return SIMStatus(state: .pukRequired)
        case QMI_UIM_CARD_APPLICATION_STATE_ILLEGAL: return SIMStatus(state: .failed)
        default: return SIMStatus(state: .notReady)
        }
    }

    /// ICCID and IMSI read from their elementary files; each nil when the card does not give it
    /// (the IMSI while PIN1 is not verified).
    func uimIdentities(into sim: inout SIMStatus) async throws(ModemError) {
        if let iccid = try await readTransparent("read EF ICCID", file: 0x2FE2, path: [0x3F00]) {
            sim.iccid = Self.iccid(iccid)
        }
        if let imsi = try await readTransparent("read EF IMSI", file: 0x6F07, path: [0x3F00, 0x7FFF]) {
            sim.imsi = Self.imsi(imsi)
        }
    }

    /// The content of a transparent elementary file, whole; nil when the card refuses it.
    private func readTransparent(
        _ operation: String, file: UInt16, path: [UInt16]
    ) async throws(ModemError) -> [UInt8]? {
        let input = qmi_message_uim_read_transparent_input_new()
        defer { qmi_message_uim_read_transparent_input_unref(input) }
        let aid = g_array_new(0, 0, 1), pathBytes = g_array_new(0, 0, 1)
        defer {
            g_array_unref(aid)
            g_array_unref(pathBytes)
        }
        // Each path element low byte first, as libqmi and ModemManager send it.
        var bytes = path.flatMap { [UInt8($0 & 0xff), UInt8($0 >> 8)] }
        g_array_append_vals(pathBytes, &bytes, guint(bytes.count))
        _ = qmi_message_uim_read_transparent_input_set_session(
            input, QMI_UIM_SESSION_TYPE_PRIMARY_GW_PROVISIONING, aid, nil)
        _ = qmi_message_uim_read_transparent_input_set_file(input, file, pathBytes, nil)
        _ = qmi_message_uim_read_transparent_input_set_read_information(input, 0, 0, nil)
        guard
            let output = try await request(
                operation, QMI_SERVICE_UIM,
                states: [
                    QMI_PROTOCOL_ERROR_ACCESS_DENIED, QMI_PROTOCOL_ERROR_SIM_FILE_NOT_FOUND,
                    QMI_PROTOCOL_ERROR_UIM_UNINITIALIZED, QMI_PROTOCOL_ERROR_PIN_RESTRICTION
                ],
                start: { client, timeout, call in
                    qmi_client_uim_read_transparent(
                        cqmi_client_uim(client), input, timeout, call.cancellable, call.callback, call.userData)
                },
                finish: { client, result, error in
                    qmi_client_uim_read_transparent_finish(cqmi_client_uim(client), result, error)
                },
                result: qmi_message_uim_read_transparent_output_get_result,
                unref: qmi_message_uim_read_transparent_output_unref)
        else { return nil }
        var content: UnsafeMutablePointer<GArray>?
        guard qmi_message_uim_read_transparent_output_get_read_result(output.pointer, &content, nil) != 0,
            let content, let data = content.pointee.data
        else { return nil }
        return Array(
            UnsafeBufferPointer(
                start: UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: Int(content.pointee.len)))
    }

    /// EF ICCID (TS 102 221): BCD digits, low nibble first, padded with F.
    nonisolated static func iccid(_ bytes: [UInt8]) -> String? {
        let digits = bytes.flatMap { [$0 & 0x0f, $0 >> 4] }.prefix { $0 <= 9 }.map { String($0) }.joined()
        return digits.isEmpty ? nil : digits
    }

    /// EF IMSI (TS 31.102 §4.2.2): a length byte, then the parity nibble and the digits, low nibble first.
    nonisolated static func imsi(_ bytes: [UInt8]) -> String? {
        guard let length = bytes.first, length > 0, bytes.count >= 1 + Int(length) else { return nil }
        let nibbles = bytes[1 ... Int(length)].flatMap { [$0 & 0x0f, $0 >> 4] }.dropFirst()
        let digits = nibbles.prefix { $0 <= 9 }.map { String($0) }.joined()
        return digits.isEmpty ? nil : digits
    }

    /// Enters PIN1 on the primary GW provisioning session.
    func uimVerifyPIN(_ pin: String) async throws(ModemError) {
        let operation = "unlock the SIM"
        let input = qmi_message_uim_verify_pin_input_new()
        defer { qmi_message_uim_verify_pin_input_unref(input) }
        let aid = g_array_new(0, 0, 1)
        defer { g_array_unref(aid) }
        _ = qmi_message_uim_verify_pin_input_set_session(input, QMI_UIM_SESSION_TYPE_PRIMARY_GW_PROVISIONING, aid, nil)
        _ = qmi_message_uim_verify_pin_input_set_info(input, QMI_UIM_PIN_ID_PIN1, pin, nil)
        let (output, failure) = try await exchange(
            operation, client(QMI_SERVICE_UIM), session: session,
            start: { client, timeout, call in
                qmi_client_uim_verify_pin(
                    cqmi_client_uim(client), input, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_uim_verify_pin_finish(cqmi_client_uim(client), result, error)
            },
            result: qmi_message_uim_verify_pin_output_get_result, unref: qmi_message_uim_verify_pin_output_unref)
        guard let failure else { return }
        var left: UInt8 = 0, unblockLeft: UInt8 = 0
        let known =
            qmi_message_uim_verify_pin_output_get_retries_remaining(output.pointer, &left, &unblockLeft, nil) != 0
        throw pinRefusal(operation, failure, retriesLeft: known ? left : nil)
    }

    /// A PIN entry the SIM refused (wrong PIN, or now blocked), with the attempts left; any other
    /// failure as it is.
    func pinRefusal(_ operation: String, _ failure: GLibError, retriesLeft left: UInt8?) -> ModemError {
        let error = session.error(operation, failure)
        guard failure.domain == qmi_protocol_error_quark(),
            [QMI_PROTOCOL_ERROR_INCORRECT_PIN, QMI_PROTOCOL_ERROR_PIN_BLOCKED].contains(where: {
                Int32($0.rawValue) == failure.code
            })
        else { return error }
        let what =
            failure.code == Int32(QMI_PROTOCOL_ERROR_PIN_BLOCKED.rawValue) || left == 0
            ? ": the SIM now asks for its PUK" : left.map { " (\($0) attempt\($0 == 1 ? "" : "s") left)" } ?? ""
        return ModemError(
            .protocol, .permission, operation: error.operation, reason: "the SIM refused the PIN\(what)",
            hint: "check the PIN in the --pin-file", status: error.status)
    }
}
