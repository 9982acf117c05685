import CGIO
import CModemManager
import CellpathCore
import GLibRuntime
import Modems

/// The radio context through ModemManager: the 3GPP interface's registration (technology,
/// network, roaming), the Signal interface's extended values (LTE, 5G NR, UMTS, GSM), the serving
/// cell of `GetCellInfo`, and the 3GPP location (LAC/TAC and cell id) where the cell info did not
/// tell them. A source ModemManager does not offer for the modem leaves its values out.
extension ModemManagerModem {
    /// The Signal interface's refresh rate cellpath sets while it reads, when none is set.
    static let signalRefreshSeconds: guint = 5
    /// How long the read waits for the Signal interface's first values after a setup.
    static let signalWait = Duration.seconds(2)

    func radioContext() async throws(ModemError) -> RadioContext {
        let registration = try await registration()
        var context = RadioContext(source: backendName.rawValue, registration: registration)
        guard registration.isRegistered else { return context }
        await readSignal(into: &context)
        if let cells = await optional({ () async throws(ModemError) in try await cellInfo() }) {
            defer { g_list_free_full(cells) { g_object_unref($0) } }
            Self.read(servingCellOf: cells, into: &context)
        }
        if context.cellID == nil || context.areaCode == nil,
            let location = await optional({ () async throws(ModemError) in try await location3GPP() })
        {
            defer { g_object_unref(gpointer(location)) }
            Self.read(location: location, into: &context)
        }
        return context
    }

    /// A read that may fail without failing the radio context (the modem does not support it).
    private func optional<Value>(_ body: () async throws(ModemError) -> Value?) async -> Value? {
        do { return try await body() } catch {
            session.logger.debug("\(error.message)")
            return nil
        }
    }

    /// The Signal interface's values. With no refresh rate set, ModemManager publishes none:
    /// cellpath sets one (ModemManager then reads the modem at once), waits for the values, and
    /// sets the rate back to 0. A rate set by someone else is left as it is, its values read.
    private func readSignal(into context: inout RadioContext) async {
        guard let signal = mm_object_peek_modem_signal(object) else { return }
        guard mm_modem_signal_get_rate(signal) == 0 else { return Self.read(signal: signal, into: &context) }
        let setUp: Void? = await optional { () async throws(ModemError) in
            try await setupSignal(signal, rate: Self.signalRefreshSeconds)
        }
        guard setUp != nil else { return }
        let deadline = ContinuousClock.now + Self.signalWait
        while !Self.hasValues(signal), ContinuousClock.now < deadline, session.secondsLeft > 0.2 {
            do { try await Task.sleep(for: .milliseconds(20)) } catch { break }
        }
        Self.read(signal: signal, into: &context)
        _ = await optional { () async throws(ModemError) in try await setupSignal(signal, rate: 0) }
    }

    private func setupSignal(_ signal: UnsafeMutablePointer<MMModemSignal>, rate: guint) async throws(ModemError) {
        try await session.call("set up the signal refresh") { call in
            mm_modem_signal_setup(signal, rate, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            guard mm_modem_signal_setup_finish(signal, result, &error) != 0 else { throw GLibError(taking: error) }
        }
    }

    /// The cells the modem reports (references of the caller's); nil when it reports none.
    private func cellInfo() async throws(ModemError) -> UnsafeMutablePointer<GList>? {
        let modem = self.modem
        return try await session.call("read the cell info") { call in
            mm_modem_get_cell_info(modem, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            let list = mm_modem_get_cell_info_finish(modem, result, &error)
            if list == nil, error != nil { throw GLibError(taking: error) }
            return list
        }
    }

    /// The 3GPP location (a reference of the caller's), when its source is enabled.
    private func location3GPP() async throws(ModemError) -> UnsafeMutablePointer<MMLocation3gpp>? {
        guard let location = mm_object_peek_modem_location(object),
            mm_modem_location_get_enabled(location).rawValue & MM_MODEM_LOCATION_SOURCE_3GPP_LAC_CI.rawValue != 0
        else { return nil }
        return try await session.call("read the 3GPP location") { call in
            mm_modem_location_get_3gpp(location, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            let value = mm_modem_location_get_3gpp_finish(location, result, &error)
            if value == nil, error != nil { throw GLibError(taking: error) }
            return value
        }
    }

    // MARK: Values

    /// Whether the Signal interface publishes any technology's values.
    nonisolated static func hasValues(_ signal: UnsafeMutablePointer<MMModemSignal>) -> Bool {
        [mm_modem_signal_peek_lte, mm_modem_signal_peek_nr5g, mm_modem_signal_peek_umts, mm_modem_signal_peek_gsm]
            .contains { peek in
                guard let values = peek(signal) else { return false }
                return [mm_signal_get_rssi(values), mm_signal_get_rsrp(values)].contains { known($0) != nil }
            }
    }

    /// LTE: RSSI, RSRP, RSRQ and SNR (as the SINR); 5G NR: RSRP and SNR as SS-RSRP and SS-SINR;
    /// the UMTS or GSM RSSI when there is no LTE one.
    nonisolated static func read(signal: UnsafeMutablePointer<MMModemSignal>, into context: inout RadioContext) {
        if let lte = mm_modem_signal_peek_lte(signal) {
            context.rssiDbm = known(mm_signal_get_rssi(lte)) ?? context.rssiDbm
            context.rsrpDbm = known(mm_signal_get_rsrp(lte)) ?? context.rsrpDbm
            context.rsrqDb = known(mm_signal_get_rsrq(lte)) ?? context.rsrqDb
            context.sinrDb = known(mm_signal_get_snr(lte)) ?? context.sinrDb
        }
        if let nr = mm_modem_signal_peek_nr5g(signal) {
            context.ssRsrpDbm = known(mm_signal_get_rsrp(nr)) ?? context.ssRsrpDbm
            context.ssSinrDb = known(mm_signal_get_snr(nr)) ?? context.ssSinrDb
        }
        for other in [mm_modem_signal_peek_umts(signal), mm_modem_signal_peek_gsm(signal)] where context.rssiDbm == nil
        {
            context.rssiDbm = other.flatMap { known(mm_signal_get_rssi($0)) }
        }
    }

    /// The serving cell of the cell info: LTE (TAC, cell id, PCI, EARFCN, RSRP, RSRQ), 5G NR
    /// (TAC, cell id, PCI, NR-ARFCN, SS-RSRP, SS-SINR) or UMTS (LAC, cell id, UARFCN).
    nonisolated static func read(servingCellOf cells: UnsafeMutablePointer<GList>, into context: inout RadioContext) {
        var node: UnsafeMutablePointer<GList>? = cells
        while let current = node {
            node = current.pointee.next
            let cell = current.pointee.data.assumingMemoryBound(to: MMCellInfo.self)
            guard mm_cell_info_get_serving(cell) != 0 else { continue }
            let raw = OpaquePointer(cell)
            switch mm_cell_info_get_cell_type(cell) {
            case MM_CELL_TYPE_LTE:
                let lte = UnsafeMutablePointer<MMCellInfoLte>(raw)
                read(
                    ServingCell(
                        areaCode: text(mm_cell_info_lte_get_tac(lte)), cellID: text(mm_cell_info_lte_get_ci(lte)),
                        physicalCellID: text(mm_cell_info_lte_get_physical_ci(lte)),
                        channel: mm_cell_info_lte_get_earfcn(lte)), into: &context)
                context.band = context.channel.flatMap(RadioContext.lteBand) ?? context.band
                context.rsrpDbm = known(mm_cell_info_lte_get_rsrp(lte)) ?? context.rsrpDbm
                context.rsrqDb = known(mm_cell_info_lte_get_rsrq(lte)) ?? context.rsrqDb
            case MM_CELL_TYPE_5GNR:
                let nr = UnsafeMutablePointer<MMCellInfoNr5g>(raw)
                read(
                    ServingCell(
                        areaCode: text(mm_cell_info_nr5g_get_tac(nr)), cellID: text(mm_cell_info_nr5g_get_ci(nr)),
                        physicalCellID: text(mm_cell_info_nr5g_get_physical_ci(nr)),
                        channel: mm_cell_info_nr5g_get_nrarfcn(nr)), into: &context)
                context.ssRsrpDbm = known(mm_cell_info_nr5g_get_rsrp(nr)) ?? context.ssRsrpDbm
                context.ssSinrDb = known(mm_cell_info_nr5g_get_sinr(nr)) ?? context.ssSinrDb
            case MM_CELL_TYPE_UMTS:
                let umts = UnsafeMutablePointer<MMCellInfoUmts>(raw)
                read(
                    ServingCell(
                        areaCode: text(mm_cell_info_umts_get_lac(umts)), cellID: text(mm_cell_info_umts_get_ci(umts)),
                        physicalCellID: nil, channel: mm_cell_info_umts_get_uarfcn(umts)), into: &context)
            default:
                continue
            }
            return
        }
    }

    /// A serving cell's identity as ModemManager gives it: hexadecimal text, the channel a number
    /// (`G_MAXUINT` unknown).
    struct ServingCell: Equatable {
        var areaCode: String?
        var cellID: String?
        var physicalCellID: String?
        var channel: guint
    }

    nonisolated static func read(_ cell: ServingCell, into context: inout RadioContext) {
        context.areaCode = cell.areaCode.flatMap { hexNumber($0) }.map(Int.init) ?? context.areaCode
        context.cellID = cell.cellID.flatMap { hexNumber($0) } ?? context.cellID
        context.physicalCellID = cell.physicalCellID.flatMap { hexNumber($0) }.map(Int.init) ?? context.physicalCellID
        if cell.channel != guint.max { context.channel = Int(cell.channel) }
    }

    /// The 3GPP location's area code (TAC, else LAC) and cell id; 0 is unknown.
    nonisolated static func read(location: UnsafeMutablePointer<MMLocation3gpp>, into context: inout RadioContext) {
        let tac = mm_location_3gpp_get_tracking_area_code(location)
        let lac = mm_location_3gpp_get_location_area_code(location)
        let cellID = mm_location_3gpp_get_cell_id(location)
        if context.areaCode == nil, tac != 0 || lac != 0 { context.areaCode = Int(tac != 0 ? tac : lac) }
        if context.cellID == nil, cellID != 0 { context.cellID = UInt64(cellID) }
    }

    /// A hexadecimal number as ModemManager writes cell identities (`1A2D001`); nil otherwise.
    nonisolated static func hexNumber(_ text: String) -> UInt64? {
        UInt64(text, radix: 16)
    }

    /// A value ModemManager knows: `MM_SIGNAL_UNKNOWN` (-G_MAXDOUBLE) and other sentinels are not.
    nonisolated static func known(_ value: Double) -> Double? {
        (-1000 ... 1000).contains(value) ? value : nil
    }
}
