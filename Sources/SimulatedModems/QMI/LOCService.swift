import SimulatorScenario
import SystemSupport

/// The QMI LOC service (0x10) of a simulated modem's GNSS receiver: Register Events, Start and
/// Stop, and the Position Report (and, for NMEA traces, GGA) indication a started session gets once its client registered
/// for it (whichever came first, as qmicli's `--loc-start` then `--loc-get-position-report`
/// with one client ID do). A modem with a fix
/// (`gnss` in the scenario) reports it at once (session status success, the position, its
/// circular horizontal uncertainty and UTC time); one without reports the session in
/// progress, then nothing, as a receiver still searching does. Confined to the modem's server
/// thread.
final class LOCService {
    /// QMI LOC message ids (libqmi data/qmi-service-loc.json).
    enum Message: UInt16 {
        case registerEvents = 0x0021, start = 0x0022, stop = 0x0023, positionReport = 0x0024, nmea = 0x0026
    }

    /// Register Events mask bits: position reports, NMEA traces (ModemManager's GPS raw source).
    static let positionReportEvents: UInt64 = 1 << 0
    static let nmeaEvents: UInt64 = 1 << 2

    private let state: ModemState
    /// The events each LOC client registered for.
    private var registrations: [UInt8: UInt64] = [:]
    /// The session each LOC client started and did not stop.
    private var sessions: [UInt8: UInt8] = [:]

    init(state: ModemState) { self.state = state }

    /// The receiver's fix now: the serving cell's place (a drive), else the modem's; nil: none.
    private var fix: SimulatedGNSS? { state.servingCell.gnss ?? state.modem.gnss }

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

    /// The Position Report of the client's session, when it started one and registered for
    /// reports, and the fix's GGA sentence when it registered for NMEA traces.
    private func reports(to clientID: UInt8) -> [[UInt8]] {
        guard let session = sessions[clientID] else { return [] }
        let events = registrations[clientID] ?? 0
        var out: [[UInt8]] = []
        if events & Self.positionReportEvents != 0 { out.append(positionReport(to: clientID, session: session)) }
        if events & Self.nmeaEvents != 0, let fix {
            out.append(
                QMUX.frame(
                    service: QMIService.loc.rawValue, clientID: clientID, transactionID: 0,
                    messageID: Message.nmea.rawValue,
                    tlvs: [QMITLV(0x01, string: Self.gga(fix, at: WallClock.now - fix.ageSeconds))], indication: true))
        }
        return out
    }

    /// The fix as an NMEA GGA sentence (time of day in UTC, degrees and decimal minutes, GPS fix
    /// quality, 8 satellites), with its checksum.
    static func gga(_ fix: SimulatedGNSS, at time: Double) -> String {
        /// Whole degrees then minutes to five decimals: `4851.50400`.
        func angle(_ degrees: Double, width: Int) -> String {
            let hundredThousandths = Int((abs(degrees) * 60 * 100_000).rounded())
            let minutes = hundredThousandths % (60 * 100_000)
            return digits(hundredThousandths / (60 * 100_000), width: width) + digits(minutes / 100_000, width: 2)
                + "." + digits(minutes % 100_000, width: 5)
        }
        let seconds = Int(time.rounded(.down)) % 86400
        let clock =
            digits(seconds / 3600, width: 2) + digits(seconds / 60 % 60, width: 2) + digits(seconds % 60, width: 2)
        let latitude = angle(fix.lat, width: 2) + (fix.lat < 0 ? ",S" : ",N")
        let longitude = angle(fix.lon, width: 3) + (fix.lon < 0 ? ",W" : ",E")
        let body = "GPGGA,\(clock).00,\(latitude),\(longitude),1,08,0.9,35.0,M,47.0,M,,"
        let checksum = String(body.utf8.reduce(UInt8(0)) { $0 ^ $1 }, radix: 16, uppercase: true)
        return "$\(body)*\(checksum.count == 1 ? "0" : "")\(checksum)"
    }

    /// The Position Report of session `session`: the fix (status 0), or in progress (status 1).
    private func positionReport(to clientID: UInt8, session: UInt8) -> [UInt8] {
        var tlvs = [QMITLV(0x02, u8: session)]
        if let fix {
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
