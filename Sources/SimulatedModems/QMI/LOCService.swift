import SimulatorScenario
import SystemSupport

/// The QMI LOC service (0x10) of a simulated modem's GNSS receiver: Register Events, Start and
/// Stop, and the Position Report indication a started session gets once its client registered
/// for it (whichever came first, as qmicli's `--loc-start` then `--loc-get-position-report`
/// with one client ID do). A modem with a fix
/// (`gnss` in the scenario) reports it at once (session status success, the position, its
/// circular horizontal uncertainty and UTC time); one without reports the session in
/// progress, then nothing, as a receiver still searching does. Confined to the modem's server
/// thread.
final class LOCService {
    /// QMI LOC message ids (libqmi data/qmi-service-loc.json).
    enum Message: UInt16 {
        case registerEvents = 0x0021, start = 0x0022, stop = 0x0023, positionReport = 0x0024
    }

    /// Register Events mask bit: position reports.
    static let positionReportEvents: UInt64 = 1 << 0

    private let state: ModemState
    /// The events each LOC client registered for.
    private var registrations: [UInt8: UInt64] = [:]
    /// The session each LOC client started and did not stop.
    private var sessions: [UInt8: UInt8] = [:]

    init(state: ModemState) { self.state = state }

    /// A client released its id: it gets no more indications.
    func released(_ clientID: UInt8) {
        registrations[clientID] = nil
        sessions[clientID] = nil
    }

    /// Every client id is released (CTL Sync).
    func releasedAll() {
        registrations.removeAll()
        sessions.removeAll()
    }

    /// The response's TLVs, and the indications that follow it.
    func handle(_ request: QMIRequest) -> (tlvs: [QMITLV], indications: [[UInt8]]) {
        switch Message(rawValue: request.messageID) {
        case .registerEvents:
            guard let mask = request.tlvs[0x01], mask.count == 8 else { return ([QMUX.result(.missingArgument)], []) }
            registrations[request.clientID] = mask.reversed().reduce(0) { $0 << 8 | UInt64($1) }
            return ([QMUX.result(.none)], reports(to: request.clientID))
        case .start:
            guard let session = request.tlvs[0x01]?.first else { return ([QMUX.result(.missingArgument)], []) }
            sessions[request.clientID] = session
            return ([QMUX.result(.none)], reports(to: request.clientID))
        case .stop:
            guard request.tlvs[0x01]?.first != nil else { return ([QMUX.result(.missingArgument)], []) }
            sessions[request.clientID] = nil
            return ([QMUX.result(.none)], [])
        default:
            return ([QMUX.result(.invalidQMICommand)], [])
        }
    }

    /// The Position Report of the client's session, when it started one and registered for reports.
    private func reports(to clientID: UInt8) -> [[UInt8]] {
        guard let session = sessions[clientID], (registrations[clientID] ?? 0) & Self.positionReportEvents != 0
        else { return [] }
        return [positionReport(to: clientID, session: session)]
    }

    /// The Position Report of session `session`: the fix (status 0), or in progress (status 1).
    private func positionReport(to clientID: UInt8, session: UInt8) -> [UInt8] {
        var tlvs = [QMITLV(0x02, u8: session)]
        if let fix = state.modem.gnss {
            var latitude = ByteWriter(), longitude = ByteWriter(), uncertainty = ByteWriter(), time = ByteWriter()
            latitude.u64(fix.lat.bitPattern)
            longitude.u64(fix.lon.bitPattern)
            uncertainty.u32(Float(fix.accuracy).bitPattern)
            time.u64(UInt64(((WallClock.now - fix.ageSeconds) * 1000).rounded()))
            tlvs += [
                QMITLV(0x01, u32: 0), QMITLV(0x10, latitude.bytes), QMITLV(0x11, longitude.bytes),
                QMITLV(0x12, uncertainty.bytes), QMITLV(0x25, time.bytes)
            ]
        } else {
            tlvs.append(QMITLV(0x01, u32: 1))
        }
        return QMUX.frame(
            service: QMIService.loc.rawValue, clientID: clientID, transactionID: 0,
            messageID: Message.positionReport.rawValue, tlvs: tlvs, indication: true)
    }
}
