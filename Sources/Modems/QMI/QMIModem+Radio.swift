import CGIO
import CQMI
import CellpathCore

/// The radio context over QMI NAS: Get Serving System (technology, network, roaming), Get
/// Signal Info, Get Cell Location Info (the serving LTE or NR cell) and Get RF Band Info, one
/// after the other on the NAS client (the check_url chain runs meanwhile). A request the modem
/// refuses leaves its values out.
extension QMIModem {
    func radioContext() async throws(ModemError) -> RadioContext {
        let registration = try await registration()
        var context = RadioContext(source: backendName.rawValue, registration: registration)
        guard registration.isRegistered else { return context }
        if let signal = await optionalRequest(signalInfo) { Self.read(signal: signal.pointer, into: &context) }
        if let cell = await optionalRequest(cellLocationInfo) { Self.read(cellLocation: cell.pointer, into: &context) }
        if let bands = await optionalRequest(rfBandInfo) { Self.read(rfBands: bands.pointer, into: &context) }
        return context
    }

    /// The request's output, nil when the modem refuses it (not every firmware has them).
    private func optionalRequest(_ body: () async throws(ModemError) -> Output?) async -> Output? {
        do { return try await body() } catch {
            session.logger.debug("\(error.message)")
            return nil
        }
    }

    private func signalInfo() async throws(ModemError) -> Output? {
        try await request(
            "get the signal info", QMI_SERVICE_NAS, states: [QMI_PROTOCOL_ERROR_NO_NETWORK_FOUND],
            start: { client, timeout, call in
                qmi_client_nas_get_signal_info(
                    cqmi_client_nas(client), nil, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_nas_get_signal_info_finish(cqmi_client_nas(client), result, error)
            },
            result: qmi_message_nas_get_signal_info_output_get_result,
            unref: qmi_message_nas_get_signal_info_output_unref)
    }

    private func cellLocationInfo() async throws(ModemError) -> Output? {
        try await request(
            "get the cell location info", QMI_SERVICE_NAS, states: [QMI_PROTOCOL_ERROR_NO_NETWORK_FOUND],
            start: { client, timeout, call in
                qmi_client_nas_get_cell_location_info(
                    cqmi_client_nas(client), nil, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_nas_get_cell_location_info_finish(cqmi_client_nas(client), result, error)
            },
            result: qmi_message_nas_get_cell_location_info_output_get_result,
            unref: qmi_message_nas_get_cell_location_info_output_unref)
    }

    private func rfBandInfo() async throws(ModemError) -> Output? {
        try await request(
            "get the RF band info", QMI_SERVICE_NAS, states: [QMI_PROTOCOL_ERROR_NO_NETWORK_FOUND],
            start: { client, timeout, call in
                qmi_client_nas_get_rf_band_information(
                    cqmi_client_nas(client), nil, timeout, call.cancellable, call.callback, call.userData)
            },
            finish: { client, result, error in
                qmi_client_nas_get_rf_band_information_finish(cqmi_client_nas(client), result, error)
            },
            result: qmi_message_nas_get_rf_band_information_output_get_result,
            unref: qmi_message_nas_get_rf_band_information_output_unref)
    }

    /// Get Signal Info: the LTE RSSI, RSRQ, RSRP and SNR (0.1 dB), the NR SS-RSRP and SS-SINR
    /// (0.1 dB), else the UMTS or GSM RSSI.
    nonisolated static func read(signal output: OpaquePointer, into context: inout RadioContext) {
        var rssi: Int8 = 0, rsrq: Int8 = 0, rsrp: Int16 = 0, snr: Int16 = 0
        if qmi_message_nas_get_signal_info_output_get_lte_signal_strength(output, &rssi, &rsrq, &rsrp, &snr, nil) != 0 {
            context.rssiDbm = Double(rssi)
            context.rsrqDb = Double(rsrq)
            context.rsrpDbm = Double(rsrp)
            context.sinrDb = Double(snr) / 10
        } else if qmi_message_nas_get_signal_info_output_get_wcdma_signal_strength(output, &rssi, nil, nil) != 0
            || qmi_message_nas_get_signal_info_output_get_gsm_signal_strength(output, &rssi, nil) != 0
        {
            context.rssiDbm = Double(rssi)
        }
        var nrRSRP: Int16 = 0, nrSNR: Int16 = 0
        if qmi_message_nas_get_signal_info_output_get_5g_signal_strength(output, &nrRSRP, &nrSNR, nil) != 0 {
            context.ssRsrpDbm = Double(nrRSRP)
            context.ssSinrDb = Double(nrSNR) / 10
        }
    }

    /// Get Cell Location Info: the serving NR cell (NR5G Cell Information, NR5G ARFCN) on 5G,
    /// else the serving LTE cell (Intrafrequency LTE Info v2).
    nonisolated static func read(cellLocation output: OpaquePointer, into context: inout RadioContext) {
        var nrTAC: UnsafeMutablePointer<GArray>?
        var nci: guint64 = 0, nrPCI: UInt16 = 0
        if context.accessTechnology == .nr5g,
            qmi_message_nas_get_cell_location_info_output_get_nr5g_cell_information(
                output, nil, &nrTAC, &nci, &nrPCI, nil, nil, nil, nil) != 0
        {
            context.cellID = UInt64(nci)
            context.physicalCellID = Int(nrPCI)
            if let nrTAC, nrTAC.pointee.len == 3, let data = nrTAC.pointee.data {
                let bytes = UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self)
                context.areaCode = Int(bytes[0]) << 16 | Int(bytes[1]) << 8 | Int(bytes[2])
            }
            var arfcn: UInt32 = 0
            if qmi_message_nas_get_cell_location_info_output_get_nr5g_arfcn(output, &arfcn, nil) != 0 {
                context.channel = Int(arfcn)
            }
            return
        }
        var tac: UInt16 = 0, cellID: UInt32 = 0, earfcn: UInt16 = 0, pci: UInt16 = 0
        if qmi_message_nas_get_cell_location_info_output_get_intrafrequency_lte_info_v2(
            output, nil, nil, &tac, &cellID, &earfcn, &pci, nil, nil, nil, nil, nil, nil) != 0
        {
            context.cellID = UInt64(cellID)
            context.areaCode = Int(tac)
            context.channel = Int(earfcn)
            context.physicalCellID = Int(pci)
        }
    }

    /// Get RF Band Info: the band of the serving technology's radio interface (the extended
    /// list's 32-bit channel where there is one).
    nonisolated static func read(rfBands output: OpaquePointer, into context: inout RadioContext) {
        var list: UnsafeMutablePointer<GArray>?
        guard qmi_message_nas_get_rf_band_information_output_get_list(output, &list, nil) != 0, let list,
            let data = list.pointee.data
        else { return }
        let entries = UnsafeBufferPointer(
            start: UnsafeRawPointer(data).assumingMemoryBound(
                to: QmiMessageNasGetRfBandInformationOutputListElement.self),
            count: Int(list.pointee.len))
        let wanted = context.accessTechnology.flatMap(radioInterface)
        guard let entry = entries.first(where: { wanted == nil || $0.radio_interface == wanted }) ?? entries.first
        else { return }
        context.band = bandName(entry.active_band_class)
        if context.channel == nil { context.channel = Int(entry.active_channel) }
    }

    /// The radio interface that serves `technology`.
    nonisolated static func radioInterface(_ technology: AccessTechnology) -> QmiNasRadioInterface? {
        switch technology {
        case .lte: QMI_NAS_RADIO_INTERFACE_LTE
        case .nr5g: QMI_NAS_RADIO_INTERFACE_5GNR
        case .umts, .hspa: QMI_NAS_RADIO_INTERFACE_UMTS
        case .gsm, .gprs, .edge: QMI_NAS_RADIO_INTERFACE_GSM
        case .cdma, .other: nil
        }
    }

    /// A band as the output names it: `B3` (E-UTRA), `n78` (NR), else libqmi's name (`wcdma-2100`).
    nonisolated static func bandName(_ band: QmiNasActiveBand) -> String? {
        guard let name = qmi_nas_active_band_get_string(band).map({ String(cString: $0) }) else { return nil }
        if name.hasPrefix("eutran-") { return "B" + name.dropFirst("eutran-".count) }
        if name.hasPrefix("nr5g-band-") { return "n" + name.dropFirst("nr5g-band-".count) }
        if name.hasPrefix("nr5g-") { return "n" + name.dropFirst("nr5g-".count) }
        return name
    }
}
