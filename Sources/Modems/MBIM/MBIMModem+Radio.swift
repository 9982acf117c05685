import CGIO
import CMBIM
import CellpathCore

/// The radio context over MBIM: Register State (technology, network, roaming), Signal State
/// (RSSI; with MBIMEx v2 and later RSRP and SNR per system type) and, where the modem lists
/// it, MS Basic Connect Extensions' Base Stations Info (the serving LTE cell; in its MBIMEx v1
/// and v2 layout: an MBIMEx v3 session leaves the cell out).
extension MBIMModem {
    func radioContext() async throws(ModemError) -> RadioContext {
        let registration = try await registration()
        var context = RadioContext(source: backendName, registration: registration, signal: nil)
        guard registration.isRegistered else { return context }
        let signal = try await signalState()
        context.rssiDbm = Self.rssiDbm(signal.rssi).map(Double.init)
        Self.read(rsrpSNR: signal.rsrpSNR, into: &context)
        if extensionsVersion < 3, let serving = await servingLTECell() { Self.read(serving, into: &context) }
        return context
    }

    /// Signal State: the coded RSSI and, with MBIMEx v2 and later, the RSRP/SNR entries.
    func signalState() async throws(ModemError) -> (rssi: UInt32, rsrpSNR: [MbimRsrpSnrInfo]) {
        let operation = "query the signal state"
        let response = try await command(operation, mbim_message_signal_state_query_new(nil))!
        var rssi: UInt32 = 99
        var count: UInt32 = 0
        var rsrpSNR: UnsafeMutablePointer<UnsafeMutablePointer<MbimRsrpSnrInfo>?>?
        defer { mbim_rsrp_snr_info_array_free(rsrpSNR) }
        let v2 = extensionsVersion >= 2
        try parse(operation) { error in
            v2
                ? mbim_message_ms_basic_connect_v2_signal_state_response_parse(
                    response.message, &rssi, nil, nil, nil, nil, &count, &rsrpSNR, &error)
                : mbim_message_signal_state_response_parse(response.message, &rssi, nil, nil, nil, nil, &error)
        }
        return (rssi, (0 ..< Int(count)).compactMap { rsrpSNR?[$0]?.pointee })
    }

    /// The coded RSSI in dBm: 0 is -113 dBm or less, 31 -51 dBm or more, 99 unknown.
    nonisolated static func rssiDbm(_ coded: UInt32) -> Int? {
        coded <= 31 ? -113 + 2 * Int(coded) : nil
    }

    /// MBIMEx v2 RSRP/SNR entries: the LTE one's RSRP (coded 0…126: -156…-31 dBm) and SNR
    /// (0…127: -23…40 dB in halves), the 5G ones' as SS-RSRP and SS-SINR; 0xFFFFFFFF unknown.
    nonisolated static func read(rsrpSNR entries: [MbimRsrpSnrInfo], into context: inout RadioContext) {
        for entry in entries {
            let rsrp = entry.rsrp <= 126 ? Double(Int(entry.rsrp) - 156) : nil
            let snr = entry.snr <= 127 ? -23 + Double(entry.snr) / 2 : nil
            let classes = entry.system_type
            if classes & UInt32(bitPattern: MBIM_DATA_CLASS_5G_NSA.rawValue | MBIM_DATA_CLASS_5G_SA.rawValue) != 0 {
                context.ssRsrpDbm = rsrp ?? context.ssRsrpDbm
                context.ssSinrDb = snr ?? context.ssSinrDb
            } else if classes & UInt32(bitPattern: MBIM_DATA_CLASS_LTE.rawValue) != 0 {
                context.rsrpDbm = rsrp ?? context.rsrpDbm
                context.sinrDb = snr ?? context.sinrDb
            }
        }
    }

    /// The serving LTE cell of Base Stations Info; nil when the modem does not support it or
    /// reports none.
    private func servingLTECell() async -> ServingLTECell? {
        let operation = "query the base stations info"
        do {
            guard
                let response = try await command(
                    operation,
                    mbim_message_ms_basic_connect_extensions_base_stations_info_query_new(0, 0, 0, 0, 0, nil),
                    states: [MBIM_STATUS_ERROR_NO_DEVICE_SUPPORT])
            else { return nil }
            var lte: UnsafeMutablePointer<MbimCellInfoServingLte>?
            defer { mbim_cell_info_serving_lte_free(lte) }
            try parse(operation) { error in
                mbim_message_ms_basic_connect_extensions_base_stations_info_response_parse(
                    response.message, nil, nil, nil, nil, &lte, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, &error
                )
            }
            guard let cell = lte?.pointee else { return nil }
            return ServingLTECell(
                cellID: cell.cell_id, earfcn: cell.earfcn, physicalCellID: cell.physical_cell_id, tac: cell.tac,
                rsrp: cell.rsrp, rsrq: cell.rsrq)
        } catch {
            session.logger.debug("\(error.message)")
            return nil
        }
    }

    /// Base Stations Info's serving LTE cell, its unknown values 0xFFFFFFFF.
    struct ServingLTECell: Equatable {
        var cellID: UInt32
        var earfcn: UInt32
        var physicalCellID: UInt32
        var tac: UInt32
        /// dBm and dB.
        var rsrp: Int32
        var rsrq: Int32
    }

    nonisolated static func read(_ cell: ServingLTECell, into context: inout RadioContext) {
        let unknown = UInt32.max
        if cell.cellID != unknown { context.cellID = UInt64(cell.cellID) }
        if cell.tac != unknown { context.areaCode = Int(cell.tac) }
        if cell.physicalCellID != unknown { context.physicalCellID = Int(cell.physicalCellID) }
        if cell.earfcn != unknown {
            context.channel = Int(cell.earfcn)
            context.band = RadioContext.lteBand(earfcn: Int(cell.earfcn))
        }
        if (-160 ... -30).contains(cell.rsrp) { context.rsrpDbm = Double(cell.rsrp) }
        if (-35 ... 0).contains(cell.rsrq) { context.rsrqDb = Double(cell.rsrq) }
    }
}
