import CellpathCore
import SimulatorScenario
import SystemSupport

/// The QMI function of a simulated modem: QMUX framing with resynchronisation, CTL (version
/// info, client ids, sync) and the DMS, NAS, WDS, WDA and LOC services, and UIM on the device
/// profiles (every one but the idealised modem, as modern firmware). Confined to the modem's server thread.
final class QMIFunction: ControlFunction {
    /// Largest QMUX frame accepted; longer claims are treated as garbage.
    static let maxFrame = 16 * 1024
    static let versions: [(QMIService, UInt16, UInt16)] = [
        (.ctl, 1, 5), (.wds, 1, 67), (.dms, 1, 14), (.nas, 1, 25), (.wda, 1, 16), (.loc, 2, 0)
    ]
    static let uimVersion: (QMIService, UInt16, UInt16) = (.uim, 1, 46)
    /// DMS UIM Verify PIN, Get PIN Status, Get ICCID and Get IMSI: refused by firmware that
    /// serves the SIM only through UIM (`dmsUIMRefused`).
    static let dmsUIMMessages: Set<UInt16> = [0x0028, 0x002B, 0x003C, 0x0043]

    private let state: ModemState
    /// The UIM service, on the device profiles and on modems with a second slot; nil: UIM
    /// requests are refused as unknown, as the idealised modem always did.
    private let uim: UIMService?
    /// The GNSS receiver's LOC service.
    private let loc: LOCService
    /// The firmware's data format (WDA).
    private(set) var dataFormat: QMIDataFormat
    /// The QMAP mux id each WDS client bound its data port to (WDS Bind Mux Data Port).
    private var muxBindings: [UInt8: UInt8] = [:]
    private var inbox: [UInt8] = []
    private var clients: [UInt8: Set<UInt8>] = [:]
    private var nextClientID: [UInt8: UInt8] = [:]
    private var garbageSent = 0
    /// One WDS session (call) of the bearer: its packet data handle, owning client (0 once it
    /// released its id), IP family (`.ipv4` or `.ipv6`; dual stack is two sessions) and the
    /// QMAP mux id its client had bound.
    private struct Call {
        var handle: UInt32
        var clientID: UInt8
        var family: BearerIPType
        var muxID: UInt8?
    }
    private var calls: [Call] = []
    /// IP family preferences set with WDS Set IP Family, per WDS client.
    private var familyPreference: [UInt8: BearerIPType] = [:]
    private var callCounter: UInt32 = 0

    init(state: ModemState) {
        self.state = state
        let profile = state.modem.profile
        uim = profile.name != .simulated || state.modem.secondSlot != nil ? UIMService(state: state) : nil
        loc = LOCService(state: state)
        dataFormat = QMIDataFormat(firmwareDefault: profile)
    }

    /// The QMAP mux id of the session that carries the bearer, if its client bound one.
    var bearerMuxID: UInt8? { calls.first?.muxID }

    var hasPartialInput: Bool { !inbox.isEmpty }

    /// Client IDs allocated and not released, over all services.
    var allocatedClientIDs: Int { clients.values.reduce(0) { $0 + $1.count } }
    func discardPartialInput() { inbox.removeAll() }

    func receive(_ bytes: [UInt8], now: Double) -> [[UInt8]] {
        inbox.append(contentsOf: bytes)
        var out: [[UInt8]] = []
        while !inbox.isEmpty {
            guard let marker = inbox.firstIndex(of: 0x01) else { inbox.removeAll(); break }
            if marker > 0 { inbox.removeFirst(marker) }
            guard inbox.count >= 3 else { break }
            let length = Int(inbox[1]) | Int(inbox[2]) << 8
            guard length >= 11, length + 1 <= Self.maxFrame, inbox.count < 4 || inbox[3] == 0x00 else {
                inbox.removeFirst()  // not a frame start: resynchronise on the next marker
                continue
            }
            guard inbox.count >= length + 1 else { break }
            let frame = Array(inbox[0 ... length])
            inbox.removeFirst(length + 1)
            out += handle(frame, now: now)
        }
        return out
    }

    private func handle(_ frame: [UInt8], now: Double) -> [[UInt8]] {
        guard let request = QMUX.parse(frame) else {
            // Answer what can be identified; otherwise drop the frame.
            let r = ByteReader(frame)
            guard let service = r.u8(at: 4), let cid = r.u8(at: 5) else { return [] }
            let ctl = service == 0
            guard let tid = ctl ? r.u8(at: 7).map(UInt16.init) : r.u16(at: 7), let message = r.u16(at: ctl ? 8 : 9)
            else { return [] }
            return [
                QMUX.frame(
                    service: service, clientID: cid, transactionID: tid, messageID: message,
                    tlvs: [QMUX.result(.malformedMessage)])
            ]
        }
        if request.service == QMIService.ctl.rawValue { return ctl(request) }
        guard clients[request.service]?.contains(request.clientID) == true else {
            return [reply(request, [QMUX.result(.invalidClientID)])]
        }
        let tlvs: [QMITLV]
        switch QMIService(rawValue: request.service) {
        case .dms where request.messageID == 0x002E:  // set operating mode, then its consequences
            let wasOn = state.radioOn
            let response = reply(request, dms(request))
            return [response] + (wasOn != state.radioOn ? registrationChanged() : [])
        case .dms: tlvs = dms(request)
        case .nas: tlvs = nas(request)
        case .wds: return wds(request, now: now)
        case .wda: tlvs = wda(request)
        case .uim:
            guard let uim else { tlvs = [QMUX.result(.invalidQMICommand)]; break }
            return uimRequest(request, uim)
        case .loc:
            let (response, indications) = loc.handle(request)
            return [reply(request, response)] + indications
        default: tlvs = [QMUX.result(.invalidQMICommand)]
        }
        return [reply(request, tlvs)]
    }

    private func reply(_ request: QMIRequest, _ tlvs: [QMITLV]) -> [UInt8] {
        QMUX.frame(
            service: request.service, clientID: request.clientID, transactionID: request.transactionID,
            messageID: request.messageID, tlvs: tlvs)
    }

    /// The service number of the garbage-frames fault's QMUX frames (one that does not exist).
    static let junkService: UInt8 = 0xee

    func isJunk(_ frame: [UInt8]) -> Bool { frame.count > 4 && frame[0] == 0x01 && frame[4] == Self.junkService }

    /// The garbage-frames fault (after version info, client allocation and sync): QMUX frames
    /// for a service that does not exist.
    private func garbage() -> [[UInt8]] {
        (0 ..< state.modem.faults.garbageFrames).map { _ in
            garbageSent += 1
            let junk = garbageBytes(count: 8 + (garbageSent * 5) % 32, seed: garbageSent)
            var w = ByteWriter()
            w.u8(0x01)
            w.u16(UInt16(5 + junk.count))
            w.u8(0x80)
            w.u8(Self.junkService)
            w.u8(UInt8(truncatingIfNeeded: garbageSent))
            w.append(junk)
            return w.bytes
        }
    }

    // MARK: CTL

    private func ctl(_ request: QMIRequest) -> [[UInt8]] {
        switch request.messageID {
        case 0x0021:  // get version info
            let versions = Self.versions + (uim != nil ? [Self.uimVersion] : [])
            var list = ByteWriter()
            list.u8(UInt8(versions.count))
            for (service, major, minor) in versions { list.u8(service.rawValue); list.u16(major); list.u16(minor) }
            return [reply(request, [QMUX.result(.none), QMITLV(0x01, list.bytes)])] + garbage()
        case 0x0022:  // allocate CID
            guard let service = request.tlvs[0x01]?.first else {
                return [reply(request, [QMUX.result(.missingArgument)])]
            }
            guard let known = QMIService(rawValue: service), known != .ctl else {
                return [reply(request, [QMUX.result(.invalidServiceType)])]
            }
            guard let cid = allocate(known.rawValue) else {
                return [reply(request, [QMUX.result(.clientIDsExhausted)])]
            }
            return [reply(request, [QMUX.result(.none), QMITLV(0x01, [service, cid])])] + garbage()
        case 0x0023:  // release CID
            guard let info = request.tlvs[0x01], info.count == 2 else {
                return [reply(request, [QMUX.result(.missingArgument)])]
            }
            guard clients[info[0]]?.remove(info[1]) != nil else {
                return [reply(request, [QMUX.result(.invalidClientID)])]
            }
            if info[0] == QMIService.wds.rawValue {
                for i in calls.indices where calls[i].clientID == info[1] { calls[i].clientID = 0 }
                familyPreference[info[1]] = nil
                muxBindings[info[1]] = nil
            }
            if info[0] == QMIService.uim.rawValue { uim?.released(info[1]) }
            if info[0] == QMIService.loc.rawValue { loc.released(info[1]) }
            return [reply(request, [QMUX.result(.none), QMITLV(0x01, info)])]
        case 0x0026:  // set data format (QMUX framing of the data port): echo the protocol
            let requested = request.tlvs[0x10].flatMap { ByteReader($0).u16(at: 0) } ?? 1
            guard requested == 1 || requested == 2 else { return [reply(request, [QMUX.result(.invalidQMICommand)])] }
            return [reply(request, [QMUX.result(.none), QMITLV(0x10, u16: requested)])]
        case 0x0027:  // sync: every client id is released
            clients.removeAll()
            muxBindings.removeAll()
            uim?.releasedAll()
            loc.releasedAll()
            return [reply(request, [QMUX.result(.none)])] + garbage()
        default:
            return [reply(request, [QMUX.result(.invalidQMICommand)])]
        }
    }

    private func allocate(_ service: UInt8) -> UInt8? {
        var used = clients[service] ?? []
        var candidate = nextClientID[service] ?? 1
        for _ in 0 ..< 254 {
            if candidate == 0 || candidate == 0xff { candidate = 1 }
            if !used.contains(candidate) {
                used.insert(candidate)
                clients[service] = used
                nextClientID[service] = candidate &+ 1
                return candidate
            }
            candidate &+= 1
        }
        return nil
    }

    // MARK: DMS

    /// The error for a request that needs a usable SIM, or nil when it is ready.
    private func simError(pinNeeded: Bool) -> QMIError? {
        switch state.simStatus {
        case .absent: return .uimUninitialized
        case .pinLocked: return pinNeeded ? .pinRestriction : nil
        case .ready: return nil
        }
    }

    private func dms(_ request: QMIRequest) -> [QMITLV] {
        let m = state.modem
        let refusesUIM = m.profile.qmi.dmsUIMRefused
        if refusesUIM && Self.dmsUIMMessages.contains(request.messageID) { return [QMUX.result(.invalidQMICommand)] }
        switch request.messageID {
        case 0x0020:  // get capabilities: 150/50 Mbit/s, non-simultaneous CS/PS, SIM supported, LTE
            var caps = ByteWriter()
            caps.u32(50_000_000); caps.u32(150_000_000); caps.u8(4); caps.u8(2); caps.u8(1); caps.u8(8)
            return [QMUX.result(.none), QMITLV(0x01, caps.bytes)]
        case 0x0021: return [QMUX.result(.none), QMITLV(0x01, string: m.manufacturer)]
        case 0x0022: return [QMUX.result(.none), QMITLV(0x01, string: m.model)]
        case 0x0023: return [QMUX.result(.none), QMITLV(0x01, string: m.firmware)]
        case 0x0024:  // get MSISDN: the number, and the IMSI too (optional TLV 0x11), as modems answer it
            if let e = simError(pinNeeded: true) { return [QMUX.result(e)] }
            let imsi = refusesUIM ? [] : [QMITLV(0x11, string: state.sim!.imsi)]
            return [QMUX.result(.none), QMITLV(0x01, string: state.sim!.msisdn)] + imsi
        case 0x0025:  // get IDs
            return [QMUX.result(.none), QMITLV(0x10, string: "0"), QMITLV(0x11, string: m.imei)]
        case 0x0028:  // UIM verify PIN
            return verifyPIN(request)
        case 0x002B:  // UIM get PIN status
            if let e = simError(pinNeeded: false) { return [QMUX.result(e)] }
            let pin1: UInt8 =
                !state.pinEnabled
                ? 3
                : state.pinAttemptsLeft <= 0 && !state.pinVerified
                    ? 4
                    : state.pinVerified ? 2 : 1
            return [
                QMUX.result(.none),
                QMITLV(0x11, [pin1, UInt8(clamping: max(0, state.pinAttemptsLeft)), 10]),
                QMITLV(0x12, [1, 3, 10])
            ]
        case 0x002D:  // get operating mode
            return [QMUX.result(.none), QMITLV(0x01, u8: state.radioOn ? 0 : 1), QMITLV(0x11, u8: 0)]
        case 0x002E:  // set operating mode
            guard let mode = request.tlvs[0x01]?.first else { return [QMUX.result(.missingArgument)] }
            switch mode {
            case 0: state.radioOn = true
            case 1, 3, 6, 7: state.radioOn = false
            default: return [QMUX.result(.invalidQMICommand)]
            }
            return [QMUX.result(.none)]
        case 0x003C:  // UIM get ICCID
            if let e = simError(pinNeeded: false) { return [QMUX.result(e)] }
            return [QMUX.result(.none), QMITLV(0x01, string: state.sim!.iccid)]
        case 0x0043:  // UIM get IMSI
            if let e = simError(pinNeeded: true) { return [QMUX.result(e)] }
            return [QMUX.result(.none), QMITLV(0x01, string: state.sim!.imsi)]
        default:
            return [QMUX.result(.invalidQMICommand)]
        }
    }

    private func verifyPIN(_ request: QMIRequest) -> [QMITLV] {
        guard let info = request.tlvs[0x01], info.count >= 2, Int(info[1]) + 2 <= info.count else {
            return [QMUX.result(.missingArgument)]
        }
        if let e = simError(pinNeeded: false) { return [QMUX.result(e)] }
        guard info[0] == 1 else { return [QMUX.result(.invalidPinID)] }
        let pin = String(decoding: info[2 ..< (2 + Int(info[1]))], as: UTF8.self)
        if !state.pinEnabled || state.pinVerified { return [QMUX.result(.noEffect)] }
        if state.pinAttemptsLeft <= 0 { return [QMUX.result(.pinBlocked), QMITLV(0x10, [0, 10])] }
        let ok = state.verifyPIN(pin)
        let retries = QMITLV(0x10, [UInt8(clamping: max(0, state.pinAttemptsLeft)), 10])
        if ok { return [QMUX.result(.none), retries] }
        return [QMUX.result(state.pinAttemptsLeft <= 0 ? .pinBlocked : .incorrectPin), retries]
    }

    // MARK: NAS

    private func plmn(mcc: String, mnc: String, name: String) -> [UInt8] {
        var w = ByteWriter()
        w.u16(UInt16(mcc) ?? 0)
        w.u16(UInt16(mnc) ?? 0)
        let text = Array(name.utf8.prefix(255))
        w.u8(UInt8(text.count))
        w.append(text)
        return w.bytes
    }

    private func servingSystemTLVs() -> [QMITLV] {
        let network = state.network
        let cell = state.servingCell
        var tlvs: [QMITLV]
        switch state.registration {
        case .home, .roaming:
            tlvs = [
                // registered, CS+PS attached, 3GPP, [the cell's radio interface]
                QMITLV(0x01, [1, 1, 1, 2, 1, cell.rat.qmiRadioInterface]),
                QMITLV(0x10, u8: state.registration == .roaming ? 0 : 1),
                QMITLV(0x11, [1, cell.rat.qmiDataCapability]),
                QMITLV(0x12, plmn(mcc: network.mcc, mnc: network.mnc, name: network.operatorName)),
                QMITLV(0x1D, u32: UInt32(cell.cellId)), QMITLV(0x24, u16: UInt16(cell.tac))
            ]
            var pcs = ByteWriter()
            pcs.u16(UInt16(network.mcc) ?? 0); pcs.u16(UInt16(network.mnc) ?? 0); pcs.u8(network.mnc.count == 3 ? 1 : 0)
            tlvs.append(QMITLV(0x27, pcs.bytes))
        case .denied:
            tlvs = [QMITLV(0x01, [3, 2, 2, 2, 0])]
        case .searching:
            tlvs = [QMITLV(0x01, [2, 2, 2, 0, 0])]
        case .deregistered, .radioOff:
            tlvs = [QMITLV(0x01, [0, 2, 2, 0, 0])]
        }
        return tlvs
    }

    /// The LTE service status and LTE system info of NAS Get System Info.
    private func systemInfoTLVs() -> [QMITLV] {
        let network = state.network
        let registered = state.isRegistered
        let status: UInt8 = registered ? 2 : state.registration == .denied ? 1 : 0  // available / limited / none
        var info = ByteWriter()
        info.u8(1); info.u8(registered ? 3 : 0)  // domain: CS+PS / none
        info.u8(1); info.u8(registered ? 3 : 0)  // service capability
        info.u8(1); info.u8(state.registration == .roaming ? 1 : 0)  // roaming
        info.u8(1); info.u8(state.registration == .denied ? 1 : 0)  // forbidden
        info.u8(0); info.u16(0)  // LAC (none on LTE)
        info.u8(registered ? 1 : 0); info.u32(registered ? UInt32(state.servingCell.cellId) : 0)  // cell id
        info.u8(state.registration == .denied ? 1 : 0); info.u8(2); info.u8(11)  // reject: PS, PLMN not allowed
        info.u8(registered ? 1 : 0)
        let mcc = Array(network.mcc.utf8.prefix(3))
        let mnc = Array(network.mnc.utf8.prefix(3))
        info.append(mcc + [UInt8](repeating: 0xff, count: 3 - mcc.count))
        info.append(mnc + [UInt8](repeating: 0xff, count: 3 - mnc.count))
        info.u8(registered ? 1 : 0); info.u16(registered ? UInt16(state.servingCell.tac) : 0)  // TAC
        return [QMITLV(0x14, [status, status, 1]), QMITLV(0x19, info.bytes)]
    }

    /// Get Signal Info: LTE (RSSI, RSRQ, RSRP, SNR in 0.1 dB) or WCDMA (RSSI, Ec/Io).
    private func signalInfoTLVs() -> [QMITLV] {
        let cell = state.servingCell
        var w = ByteWriter()
        switch cell.rat {
        case .lte:
            w.u8(UInt8(bitPattern: Int8(clamping: cell.rssiDbm)))
            w.u8(UInt8(bitPattern: Int8(clamping: cell.rsrqDb)))
            w.u16(UInt16(bitPattern: Int16(clamping: cell.rsrpDbm)))
            w.u16(UInt16(bitPattern: Int16(clamping: Int((cell.sinrDb * 10).rounded()))))
            return [QMITLV(0x14, w.bytes)]
        case .umts:
            w.u8(UInt8(bitPattern: Int8(clamping: cell.rssiDbm)))
            w.u16(UInt16(bitPattern: -10))  // Ec/Io
            return [QMITLV(0x13, w.bytes)]
        }
    }

    /// Get Cell Location Info: the serving LTE cell (Intrafrequency LTE Info v2) with itself as
    /// the one measured cell (0.1 dB units); nothing for a UMTS cell.
    private func cellLocationTLVs() -> [QMITLV] {
        let cell = state.servingCell
        guard cell.rat == .lte else { return [] }
        let network = state.network
        var w = ByteWriter()
        w.u8(0)  // connected, not idle
        w.append(Self.bcdPLMN(mcc: network.mcc, mnc: network.mnc))
        w.u16(UInt16(cell.tac))
        w.u32(UInt32(cell.cellId))
        w.u16(UInt16(cell.channel))
        w.u16(UInt16(cell.pci))
        w.u8(5); w.u8(10); w.u8(8); w.u8(20)  // reselection priority, search thresholds
        w.u8(1)
        w.u16(UInt16(cell.pci))
        w.u16(UInt16(bitPattern: Int16(clamping: cell.rsrqDb * 10)))
        w.u16(UInt16(bitPattern: Int16(clamping: cell.rsrpDbm * 10)))
        w.u16(UInt16(bitPattern: Int16(clamping: cell.rssiDbm * 10)))
        w.u16(20)  // cell selection Rx level
        return [QMITLV(0x13, w.bytes)]
    }

    /// A PLMN in 3GPP BCD: MCC digits 2|1, MNC digit 3 (F for two digits)|MCC digit 3, MNC digits 2|1.
    static func bcdPLMN(mcc: String, mnc: String) -> [UInt8] {
        let c = mcc.compactMap(\.wholeNumberValue).map(UInt8.init)
        let n = mnc.compactMap(\.wholeNumberValue).map(UInt8.init)
        guard c.count == 3, n.count >= 2 else { return [0xff, 0xff, 0xff] }
        return [c[1] << 4 | c[0], (n.count == 3 ? n[2] : 0xf) << 4 | c[2], n[1] << 4 | n[0]]
    }

    private func nas(_ request: QMIRequest) -> [QMITLV] {
        switch request.messageID {
        case 0x0002, 0x0003:  // set event report, register indications
            return [QMUX.result(.none)]
        case 0x0020:  // get signal strength
            guard let dbm = state.rssiDbm else { return [QMUX.result(.noNetworkFound)] }
            let strength = Int8(clamping: dbm)
            var rssiList = ByteWriter()
            rssiList.u16(1); rssiList.u8(UInt8(clamping: -dbm)); rssiList.u8(state.servingCell.rat.qmiRadioInterface)
            let cell = state.servingCell
            let radio = cell.rat.qmiRadioInterface
            var tlvs = [QMUX.result(.none), QMITLV(0x01, [UInt8(bitPattern: strength), radio])]
            tlvs.append(QMITLV(0x11, rssiList.bytes))
            if cell.rat == .lte {
                var snr = ByteWriter(); snr.u16(UInt16(bitPattern: Int16(clamping: Int((cell.sinrDb * 10).rounded()))))
                var rsrp = ByteWriter(); rsrp.u16(UInt16(bitPattern: Int16(clamping: cell.rsrpDbm)))
                tlvs += [
                    QMITLV(0x16, [UInt8(bitPattern: Int8(clamping: cell.rsrqDb)), radio]),
                    QMITLV(0x17, snr.bytes), QMITLV(0x18, rsrp.bytes)
                ]
            }
            return tlvs
        case 0x0024:  // get serving system
            return [QMUX.result(.none)] + servingSystemTLVs()
        case 0x004F:  // get signal info
            guard state.isRegistered else { return [QMUX.result(.noNetworkFound)] }
            return [QMUX.result(.none)] + signalInfoTLVs()
        case 0x0043:  // get cell location info
            guard state.isRegistered else { return [QMUX.result(.noNetworkFound)] }
            return [QMUX.result(.none)] + cellLocationTLVs()
        case 0x0031:  // get RF band info
            guard state.isRegistered, let band = state.servingCell.qmiActiveBand else {
                return [QMUX.result(.invalidQMICommand)]
            }
            var list = ByteWriter()
            list.u8(1); list.u8(state.servingCell.rat.qmiRadioInterface)
            list.u16(band); list.u16(UInt16(state.servingCell.channel))
            return [QMUX.result(.none), QMITLV(0x01, list.bytes)]
        case 0x004D:  // get system info (LTE only)
            return [QMUX.result(.none)] + systemInfoTLVs()
        case 0x0025:  // get home network
            if let e = simError(pinNeeded: true) { return [QMUX.result(e)] }
            let home = state.homePLMN
            return [QMUX.result(.none), QMITLV(0x01, plmn(mcc: home.mcc, mnc: home.mnc, name: state.homeOperatorName))]
        default:
            return [QMUX.result(.invalidQMICommand)]
        }
    }

    // MARK: WDS

    private func callFailed(_ reason: UInt16, verboseType: UInt16, verboseReason: Int) -> [QMITLV] {
        var verbose = ByteWriter()
        verbose.u16(verboseType)
        verbose.u16(UInt16(bitPattern: Int16(clamping: verboseReason)))
        return [QMUX.result(.callFailed), QMITLV(0x10, u16: reason), QMITLV(0x11, verbose.bytes)]
    }

    private func packetStatusIndication(
        to clientID: UInt8, family: BearerIPType, connected: Bool, endReason: UInt16?, cause: Int?
    ) -> [UInt8] {
        var tlvs = [QMITLV(0x01, [connected ? 2 : 1, 0])]
        if let endReason { tlvs.append(QMITLV(0x10, u16: endReason)) }
        if let cause {
            var verbose = ByteWriter()
            verbose.u16(6)
            verbose.u16(UInt16(bitPattern: Int16(clamping: cause)))
            tlvs.append(QMITLV(0x11, verbose.bytes))
        }
        tlvs.append(QMITLV(0x12, u8: family == .ipv6 ? 6 : 4))
        return QMUX.frame(
            service: QMIService.wds.rawValue, clientID: clientID, transactionID: 0,
            messageID: 0x0022, tlvs: tlvs, indication: true)
    }

    /// Ends every session and takes the bearer down; returns the sessions that were up.
    private func stopCalls() -> [Call] {
        let ended = calls
        calls = []
        state.disconnect()
        return ended
    }

    /// The IP family a Start Network asks for: its IP family preference TLV (4, 6, or 8 =
    /// unspecified: IPv4 when the network has it), else the client's Set IP Family, else IPv4.
    private func requestedFamily(_ request: QMIRequest) -> BearerIPType {
        switch request.tlvs[0x19]?.first {
        case 6: return .ipv6
        case 8: return state.modem.ipType.carriesIPv4 ? .ipv4 : .ipv6
        case 4: return .ipv4
        default: return familyPreference[request.clientID] ?? .ipv4
        }
    }

    private func wds(_ request: QMIRequest, now: Double) -> [[UInt8]] {
        switch request.messageID {
        case 0x0001, 0x0003:  // set event report, indication register
            return [reply(request, [QMUX.result(.none)])]
        case 0x00A2:  // bind mux data port
            return [reply(request, bindMuxDataPort(request))]
        case 0x004D:  // set IP family preference of this client
            switch request.tlvs[0x01]?.first {
            case 4: familyPreference[request.clientID] = .ipv4
            case 6: familyPreference[request.clientID] = .ipv6
            case 8: familyPreference[request.clientID] = nil
            default: return [reply(request, [QMUX.result(.missingArgument)])]
            }
            return [reply(request, [QMUX.result(.none)])]
        case 0x0024:  // get packet statistics: the simulator does not count the data path's packets
            return [
                reply(
                    request,
                    [
                        QMUX.result(.none), QMITLV(0x10, u32: 0), QMITLV(0x11, u32: 0),
                        QMITLV(0x19, [UInt8](repeating: 0, count: 8)), QMITLV(0x1A, [UInt8](repeating: 0, count: 8))
                    ])
            ]
        case 0x0020:  // start network: one session per IP family
            let apn = request.tlvs[0x14].map { String(decoding: $0, as: UTF8.self) } ?? ""
            let family = requestedFamily(request)
            if let call = calls.first(where: { $0.family == family }) {
                return [reply(request, [QMUX.result(.noEffect), QMITLV(0x01, u32: call.handle)])]
            }
            switch state.connect(apn: apn, requested: family, now: now) {
            case .success:
                callCounter += 1
                let handle = 0x3C00_0000 | (UInt32(state.index) << 16) | (callCounter & 0xffff)
                calls.append(
                    Call(
                        handle: handle, clientID: request.clientID, family: family,
                        muxID: muxBindings[request.clientID]))
                return [
                    reply(request, [QMUX.result(.none), QMITLV(0x01, u32: handle)]),
                    packetStatusIndication(
                        to: request.clientID, family: family, connected: true, endReason: nil, cause: nil)
                ]
            case .failure(let refusal):
                let tlvs: [QMITLV] =
                    switch refusal {
                    case .noSIM, .pinRequired, .radioOff, .notRegistered:
                        callFailed(3, verboseType: 3, verboseReason: 2001)  // no service
                    case .network(let cause):
                        callFailed(1, verboseType: 6, verboseReason: cause)  // 3GPP cause
                    case .networkRefused:
                        callFailed(11, verboseType: 2, verboseReason: 201)  // internal error
                    }
                return [reply(request, tlvs)]
            }
        case 0x0021:  // stop network
            guard let value = request.tlvs[0x01], value.count == 4, let handle = ByteReader(value).u32(at: 0) else {
                return [reply(request, [QMUX.result(.missingArgument)])]
            }
            if handle == 0xFFFF_FFFF { return [reply(request, [QMUX.result(.none)])] }  // global: autoconnect only
            guard let index = calls.firstIndex(where: { $0.handle == handle }) else {
                return [reply(request, [QMUX.result(.invalidHandle)])]
            }
            let ended = calls.remove(at: index)
            if calls.isEmpty { state.disconnect() } else { state.release(ended.family) }
            var out = [reply(request, [QMUX.result(.none)])]
            if ended.clientID != 0 {
                out.append(
                    packetStatusIndication(
                        to: ended.clientID, family: ended.family, connected: false, endReason: 2, cause: nil))
            }
            return out
        case 0x0022:  // get packet service status
            return [reply(request, [QMUX.result(.none), QMITLV(0x01, u8: state.bearer != nil ? 2 : 1)])]
        case 0x002D:  // get current settings of this client's family
            return [reply(request, currentSettings(clientID: request.clientID))]
        default:
            return [reply(request, [QMUX.result(.invalidQMICommand)])]
        }
    }

    /// WDS Get Current Settings for `clientID`: the settings of the family of its session, else
    /// of its Set IP Family preference, else IPv4 when the bearer has it, else IPv6.
    private func currentSettings(clientID: UInt8) -> [QMITLV] {
        guard let bearer = state.bearer, let carried = bearer.assignment.ipType else {
            return [QMUX.result(.outOfCall)]
        }
        let family =
            calls.first { $0.clientID == clientID }?.family ?? familyPreference[clientID]
            ?? (carried.carriesIPv4 ? .ipv4 : .ipv6)
        let a = bearer.assignment
        var tlvs = [QMUX.result(.none)]
        if family == .ipv6 {
            guard let v6 = a.ipv6 else { return [QMUX.result(.outOfCall)] }
            tlvs += [QMITLV(0x11, u8: 2), QMITLV(0x14, string: bearer.apn)]  // PDP type IPv6
            if let dns = v6.dnsServers.first.flatMap(IPAddress.ipv6Bytes) { tlvs.append(QMITLV(0x27, dns)) }
            if v6.dnsServers.count > 1, let dns = IPAddress.ipv6Bytes(v6.dnsServers[1]) {
                tlvs.append(QMITLV(0x28, dns))
            }
            let prefix = UInt8(clamping: v6.prefixLength)
            if let address = IPAddress.ipv6Bytes(v6.address) { tlvs.append(QMITLV(0x25, address + [prefix])) }
            if let gateway = IPAddress.ipv6Bytes(v6.gateway) { tlvs.append(QMITLV(0x26, gateway + [prefix])) }
            tlvs.append(QMITLV(0x29, u32: UInt32(clamping: a.mtu)))
            tlvs.append(QMITLV(0x2B, u8: 6))
            return tlvs
        }
        guard let v4 = a.ipv4 else { return [QMUX.result(.outOfCall)] }
        tlvs += [QMITLV(0x11, u8: 0), QMITLV(0x14, string: bearer.apn)]  // PDP type IPv4
        if let dns = v4.dnsServers.first, let t = QMITLV(0x15, ipv4: dns) { tlvs.append(t) }
        if v4.dnsServers.count > 1, let t = QMITLV(0x16, ipv4: v4.dnsServers[1]) { tlvs.append(t) }
        if let t = QMITLV(0x1E, ipv4: v4.address) { tlvs.append(t) }
        if let t = QMITLV(0x20, ipv4: v4.gateway) { tlvs.append(t) }
        let mask = ipv4Netmask(prefixLength: v4.prefixLength)
        tlvs.append(QMITLV(0x21, [mask[3], mask[2], mask[1], mask[0]]))
        tlvs.append(QMITLV(0x29, u32: UInt32(clamping: a.mtu)))
        tlvs.append(QMITLV(0x2B, u8: 4))
        return tlvs
    }

    // MARK: WDA

    private func wda(_ request: QMIRequest) -> [QMITLV] {
        switch request.messageID {
        case 0x0020:  // set data format
            let quirks = state.modem.profile.qmi
            if let error = dataFormat.apply(
                request.tlvs, qmapCapable: quirks.qmap, ethernetCapable: quirks.ethernetFraming)
            {
                return [QMUX.result(error)]
            }
            return [QMUX.result(.none)] + dataFormat.tlvs
        case 0x0021: return [QMUX.result(.none)] + dataFormat.tlvs
        default: return [QMUX.result(.invalidQMICommand)]
        }
    }

    /// WDS Bind Mux Data Port: binds the client's sessions to a QMAP mux id on the data
    /// endpoint. QMAP firmware checks the endpoint: HSUSB on USB modules, PCIe on PCIe ones.
    private func bindMuxDataPort(_ request: QMIRequest) -> [QMITLV] {
        let profile = state.modem.profile
        guard profile.qmi.qmap else { return [QMUX.result(.none)] }
        guard let mux = request.tlvs[0x11]?.first else { return [QMUX.result(.missingArgument)] }
        if let endpoint = request.tlvs[0x10].flatMap({ ByteReader($0).u32(at: 0) }) {
            let expected: UInt32 = profile.bus == .pcie ? 3 : 2
            guard endpoint == expected else { return [QMUX.result(.invalidArgument)] }
        }
        guard mux != 0 && mux != 0xff else { return [QMUX.result(.invalidArgument)] }
        muxBindings[request.clientID] = mux
        return [QMUX.result(.none)]
    }

    // MARK: UIM

    private func uimRequest(_ request: QMIRequest, _ uim: UIMService) -> [[UInt8]] {
        let pinBefore = (state.pinVerified, state.pinAttemptsLeft)
        let (tlvs, switched) = uim.handle(request)
        if !switched && pinBefore != (state.pinVerified, state.pinAttemptsLeft) {
            // A PIN entry changed the card: its state goes to the clients that asked, and a
            // SIM now ready lets the modem register.
            let registration = pinBefore.0 != state.pinVerified ? registrationChanged() : []
            return [reply(request, tlvs)] + uim.cardStatusIndications() + registration
        }
        guard switched else { return [reply(request, tlvs)] }
        // The card went away with the bearer (ModemState.switchSlot): the sessions end.
        let ended = calls
        calls = []
        var out = [reply(request, tlvs)]
        for call in ended where call.clientID != 0 {
            out.append(
                packetStatusIndication(
                    to: call.clientID, family: call.family, connected: false,
                    endReason: 3, cause: nil))
        }
        return out + uim.slotSwitchIndications() + registrationChanged()
    }

    // MARK: Events

    func bearerDropped(cause: Int, family: BearerIPType?) -> [[UInt8]] {
        let ended: [Call]
        if let family, calls.contains(where: { $0.family != family }) {
            ended = calls.filter { $0.family == family }
            calls.removeAll { $0.family == family }
            state.release(family)
        } else {
            ended = stopCalls()
        }
        return ended.filter { $0.clientID != 0 }.map {
            packetStatusIndication(to: $0.clientID, family: $0.family, connected: false, endReason: 1, cause: cause)
        }
    }

    func registrationChanged() -> [[UInt8]] {
        var out: [[UInt8]] = []
        if !state.isRegistered, !calls.isEmpty {
            for ended in stopCalls() where ended.clientID != 0 {
                out.append(
                    packetStatusIndication(
                        to: ended.clientID, family: ended.family, connected: false, endReason: 3, cause: nil))
            }
        }
        for cid in clients[QMIService.nas.rawValue] ?? [] {
            out.append(
                QMUX.frame(
                    service: QMIService.nas.rawValue, clientID: cid, transactionID: 0,
                    messageID: 0x0024, tlvs: servingSystemTLVs(), indication: true))
        }
        return out
    }

    /// The calls end (reason 3, no service), then every DMS client gets an Event Report with the
    /// UIM state (TLV 0x15: 0x02 not present, 0x00 initialization completed) and every NAS
    /// client a Serving System indication.
    func simChanged(to sim: SimulatedSIM?) -> [[UInt8]] {
        var out = stopCalls().filter { $0.clientID != 0 }.map {
            packetStatusIndication(to: $0.clientID, family: $0.family, connected: false, endReason: 3, cause: nil)
        }
        state.changeSIM(sim)
        for cid in clients[QMIService.dms.rawValue] ?? [] {
            out.append(
                QMUX.frame(
                    service: QMIService.dms.rawValue, clientID: cid, transactionID: 0, messageID: 0x0001,
                    tlvs: [QMITLV(0x15, u8: sim == nil ? 0x02 : 0x00)], indication: true))
        }
        return out + registrationChanged()
    }

    func shutdown() {
        _ = stopCalls()
        clients.removeAll()
    }
}
