import CGIO
import CMBIM
import CellpathCore

/// The radio context over MBIM: Register State (technology, network, roaming), Signal State
/// (RSSI; with MBIMEx v2 and later RSRP and SNR per system type) and, where the modem lists
/// it, MS Basic Connect Extensions' Base Stations Info (the serving LTE cell; in its MBIMEx v1
/// and v2 layout: an MBIMEx v3 session leaves the cell out).
extension MBIMModem {
    /// MBIM defines no GNSS service (vendors' are QMI over MBIM, which cellpath does not speak):
    /// no fix, said once in the debug log.
    func gnssFix(within bound: Duration) async throws(ModemError) -> GNSSReading {
        let reason = "MBIM has no standard GNSS service (a vendor's QMI over MBIM is not read)"
        session.logger.debug("\(port.name): \(reason)")
        return .noFix(reason)
    }

    func radioContext() async throws(ModemError) -> RadioContext {
        let registration = try await registration()
        var context = RadioContext(source: backendName.rawValue, registration: registration)
        guard registration.isRegistered else { return context }
        let signal = try await signalState()
        context.rssiDbm = Self.rssiDbm(signal.rssi).map(Double.init)
        Self.read(rsrpSNR: signal.rsrpSNR, into: &context)
        if let serving = await servingCells() { Self.read(serving, into: &context) }
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

    /// A coded RSRP (0…126: -156…-31 dBm); nil above (0xFFFFFFFF unknown).
    nonisolated static func decodedRSRP(_ coded: UInt32) -> Double? {
        coded <= 126 ? Double(Int(coded) - 156) : nil
    }

    /// A coded SNR or SINR (0…127: -23…40 dB in halves); nil above (0xFFFFFFFF unknown).
    nonisolated static func decodedSNR(_ coded: UInt32) -> Double? {
        coded <= 127 ? -23 + Double(coded) / 2 : nil
    }

    /// MBIMEx v2 RSRP/SNR entries: the LTE one's RSRP and SNR, the 5G ones' as SS-RSRP and
    /// SS-SINR.
    nonisolated static func read(rsrpSNR entries: [MbimRsrpSnrInfo], into context: inout RadioContext) {
        for entry in entries {
            let rsrp = decodedRSRP(entry.rsrp)
            let snr = decodedSNR(entry.snr)
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

    /// The serving cells of Base Stations Info (LTE, UMTS, and with MBIMEx v3 the NR ones); nil
    /// when the modem does not support it.
    private func servingCells() async -> ServingCells? {
        let operation = "query the base stations info"
        let v3 = extensionsVersion >= 3
        do {
            guard
                let response = try await command(
                    operation,
                    v3
                        ? mbim_message_ms_basic_connect_extensions_v3_base_stations_info_query_new(
                            0, 0, 0, 0, 0, 0, nil)
                        : mbim_message_ms_basic_connect_extensions_base_stations_info_query_new(0, 0, 0, 0, 0, nil),
                    states: [MBIM_STATUS_ERROR_NO_DEVICE_SUPPORT])
            else { return nil }
            var lte: UnsafeMutablePointer<MbimCellInfoServingLte>?
            var umts: UnsafeMutablePointer<MbimCellInfoServingUmts>?
            var nrCount: UInt32 = 0
            var nr: UnsafeMutablePointer<UnsafeMutablePointer<MbimCellInfoServingNr>?>?
            defer {
                mbim_cell_info_serving_lte_free(lte)
                mbim_cell_info_serving_umts_free(umts)
                mbim_cell_info_serving_nr_array_free(nr)
            }
            try parse(operation) { error in
                v3
                    ? mbim_message_ms_basic_connect_extensions_v3_base_stations_info_response_parse(
                        response.message, nil, nil, nil, &umts, nil, &lte, nil, nil, nil, nil, nil, nil, nil, nil,
                        nil, nil, &nrCount, &nr, nil, nil, &error)
                    : mbim_message_ms_basic_connect_extensions_base_stations_info_response_parse(
                        response.message, nil, nil, &umts, nil, &lte, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
                        &error)
            }
            return ServingCells(
                lte: lte.map {
                    ServingLTECell(
                        cellID: $0.pointee.cell_id, earfcn: $0.pointee.earfcn,
                        physicalCellID: $0.pointee.physical_cell_id, tac: $0.pointee.tac, rsrp: $0.pointee.rsrp,
                        rsrq: $0.pointee.rsrq)
                },
                umts: umts.map {
                    ServingUMTSCell(
                        cellID: $0.pointee.cell_id, lac: $0.pointee.location_area_code, uarfcn: $0.pointee.uarfcn)
                },
                nr: (0 ..< Int(nrCount)).compactMap { nr?[$0]?.pointee }.map {
                    ServingNRCell(
                        nci: UInt64($0.nci), physicalCellID: $0.physical_cell_id, nrarfcn: $0.nrarfcn, tac: $0.tac,
                        rsrp: $0.rsrp, sinr: $0.sinr)
                })
        } catch {
            session.logger.debug("\(error.message)")
            return nil
        }
    }

    /// Base Stations Info's serving cells, their unknown values all ones.
    struct ServingCells: Equatable {
        var lte: ServingLTECell?
        var umts: ServingUMTSCell?
        var nr: [ServingNRCell] = []
    }

    struct ServingLTECell: Equatable {
        var cellID: UInt32
        var earfcn: UInt32
        var physicalCellID: UInt32
        var tac: UInt32
        /// dBm and dB.
        var rsrp: Int32
        var rsrq: Int32
    }

    struct ServingUMTSCell: Equatable {
        var cellID: UInt32
        var lac: UInt32
        var uarfcn: UInt32
    }

    /// An NR serving cell: its RSRP and SINR coded as Signal State's RSRP/SNR entries.
    struct ServingNRCell: Equatable {
        var nci: UInt64
        var physicalCellID: UInt32
        var nrarfcn: UInt32
        var tac: UInt32
        var rsrp: UInt32
        var sinr: UInt32
    }

    /// The serving cell of the registered technology: NR on 5G (its SS-RSRP and SS-SINR also on
    /// LTE, the NR leg of a non-standalone 5G), LTE, UMTS.
    nonisolated static func read(_ cells: ServingCells, into context: inout RadioContext) {
        let unknown = UInt32.max
        let nrLeg = cells.nr.first
        if let nrLeg {
            context.ssRsrpDbm = decodedRSRP(nrLeg.rsrp) ?? context.ssRsrpDbm
            context.ssSinrDb = decodedSNR(nrLeg.sinr) ?? context.ssSinrDb
        }
        if let nr = nrLeg, context.accessTechnology == .nr5g {
            if nr.nci != UInt64.max { context.cellID = nr.nci }
            if nr.tac != unknown { context.areaCode = Int(nr.tac) }
            if nr.physicalCellID != unknown { context.physicalCellID = Int(nr.physicalCellID) }
            if nr.nrarfcn != unknown { context.channel = Int(nr.nrarfcn) }
        } else if let cell = cells.lte {
            if cell.cellID != unknown { context.cellID = UInt64(cell.cellID) }
            if cell.tac != unknown { context.areaCode = Int(cell.tac) }
            if cell.physicalCellID != unknown { context.physicalCellID = Int(cell.physicalCellID) }
            if cell.earfcn != unknown {
                context.channel = Int(cell.earfcn)
                context.band = RadioContext.lteBand(earfcn: Int(cell.earfcn))
            }
            if (-160 ... -30).contains(cell.rsrp) { context.rsrpDbm = Double(cell.rsrp) }
            if (-35 ... 0).contains(cell.rsrq) { context.rsrqDb = Double(cell.rsrq) }
        } else if let cell = cells.umts {
            if cell.cellID != unknown { context.cellID = UInt64(cell.cellID) }
            if cell.lac != unknown { context.areaCode = Int(cell.lac) }
            if cell.uarfcn != unknown { context.channel = Int(cell.uarfcn) }
        }
    }
}
