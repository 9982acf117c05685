import SimulatorScenario

/// The QMI UIM service (0x0B) of a simulated modem, as modern Qualcomm firmware serves it and
/// ModemManager uses it when DMS refuses the old UIM commands: Get Card Status, Verify PIN, Read
/// Transparent of EF ICCID and EF IMSI, Get Slot Status, Switch Slot and Register Events with
/// their Card Status and Slot Status indications. One card: the active physical slot's, in
/// logical slot 1. Confined to the modem's server thread.
final class UIMService {
    /// QMI UIM message ids (libqmi data/qmi-service-uim.json).
    enum Message: UInt16 {
        case readTransparent = 0x0020, verifyPIN = 0x0026, registerEvents = 0x002E, getCardStatus = 0x002F
        case cardStatusIndication = 0x0032, switchSlot = 0x0046, getSlotStatus = 0x0047, slotStatusIndication = 0x0048
    }

    /// Register Events mask bits: card status, physical slot status.
    static let cardStatusEvents: UInt32 = 1 << 0
    static let slotStatusEvents: UInt32 = 1 << 4
    /// The USIM application's identifier (RID A000000087, 3GPP USIM).
    static let usimAID: [UInt8] = [
        0xA0, 0x00, 0x00, 0x00, 0x87, 0x10, 0x02, 0xFF,
        0xFF, 0xFF, 0xFF, 0x89, 0x06, 0x19, 0x00, 0x00
    ]
    /// The answer to reset a UICC sends (TS 102 221: T=0/T=1, UICC).
    static let atr: [UInt8] = [
        0x3B, 0x9F, 0x96, 0x80, 0x1F, 0xC7, 0x80, 0x31,
        0xE0, 0x73, 0xFE, 0x21, 0x1B, 0x63, 0xF1, 0x00
    ]

    private let state: ModemState
    /// The events each UIM client registered for.
    private var registrations: [UInt8: UInt32] = [:]

    init(state: ModemState) { self.state = state }

    /// A client released its id: it gets no more indications.
    func released(_ clientID: UInt8) { registrations[clientID] = nil }

    /// Every client id is released (CTL Sync).
    func releasedAll() { registrations.removeAll() }

    /// The response TLVs to `request`, and whether the active slot changed.
    func handle(_ request: QMIRequest) -> (tlvs: [QMITLV], switched: Bool) {
        switch Message(rawValue: request.messageID) {
        case .getCardStatus: return ([QMUX.result(.none), cardStatus()], false)
        case .getSlotStatus: return ([QMUX.result(.none)] + slotStatus(), false)
        case .registerEvents:
            guard let value = request.tlvs[0x01], let mask = ByteReader(value).u32(at: 0) else {
                return ([QMUX.result(.missingArgument)], false)
            }
            registrations[request.clientID] = mask
            return ([QMUX.result(.none), QMITLV(0x10, u32: mask)], false)
        case .verifyPIN: return (verifyPIN(request), false)
        case .readTransparent: return (readTransparent(request), false)
        case .switchSlot:
            guard let value = request.tlvs[0x02], let slot = ByteReader(value).u32(at: 0) else {
                return ([QMUX.result(.missingArgument)], false)
            }
            if Int(slot) == state.activeSlot { return ([QMUX.result(.noEffect)], false) }
            guard state.switchSlot(to: Int(slot)) else { return ([QMUX.result(.invalidArgument)], false) }
            return ([QMUX.result(.none)], true)
        case .cardStatusIndication, .slotStatusIndication, nil:
            return ([QMUX.result(.invalidQMICommand)], false)
        }
    }

    /// The indications of a slot switch, as firmware sends them: the card goes away, the slot
    /// status changes, and the other slot's card (or none) comes.
    func slotSwitchIndications() -> [[UInt8]] {
        var out: [[UInt8]] = []
        for (client, mask) in registrations.sorted(by: { $0.key < $1.key }) {
            if mask & Self.cardStatusEvents != 0 {
                out.append(indication(.cardStatusIndication, to: client, [cardStatus(present: false)]))
            }
            if mask & Self.slotStatusEvents != 0 {
                out.append(indication(.slotStatusIndication, to: client, slotStatus()))
            }
            if mask & Self.cardStatusEvents != 0 {
                out.append(indication(.cardStatusIndication, to: client, [cardStatus()]))
            }
        }
        return out
    }

    /// Card Status indications (after a PIN entry changed the card's state).
    func cardStatusIndications() -> [[UInt8]] {
        registrations.sorted { $0.key < $1.key }.filter { $0.value & Self.cardStatusEvents != 0 }.map {
            indication(.cardStatusIndication, to: $0.key, [cardStatus()])
        }
    }

    private func indication(_ message: Message, to client: UInt8, _ tlvs: [QMITLV]) -> [UInt8] {
        QMUX.frame(
            service: QMIService.uim.rawValue, clientID: client, transactionID: 0, messageID: message.rawValue,
            tlvs: tlvs, indication: true)
    }

    // MARK: Card status

    /// PIN1 as QMI UIM states it: 1 enabled-not-verified, 2 enabled-verified, 3 disabled, 4 blocked.
    private var pin1State: UInt8 {
        if !state.pinEnabled { return 3 }
        if state.pinVerified { return 2 }
        return state.pinAttemptsLeft <= 0 ? 4 : 1
    }

    /// The USIM application's state: 2 PIN1 required, 3 PUK1 required, 7 ready.
    private var applicationState: UInt8 {
        switch pin1State {
        case 1: 2
        case 4: 3
        default: 7
        }
    }

    /// Card Status (TLV 0x10): the active slot's card with its USIM application, primary GW
    /// session on card 0 application 0; no session (0xFFFF) without a card or eSIM profile.
    private func cardStatus(present: Bool = true) -> QMITLV {
        let sim = present ? state.sim : nil
        let esimWithoutProfile = present && sim == nil && state.activeSlot == 2 && state.modem.secondSlot?.esim == true
        var w = ByteWriter()
        w.u16(sim != nil ? 0x0000 : 0xFFFF)
        w.u16(0xFFFF); w.u16(0xFFFF); w.u16(0xFFFF)
        w.u8(1)
        w.u8(sim != nil || esimWithoutProfile ? 1 : 0)  // card present / absent
        w.u8(0); w.u8(0); w.u8(0); w.u8(0)  // no UPIN; error code: unknown
        guard sim != nil else {
            w.u8(0)  // no application
            return QMITLV(0x10, w.bytes)
        }
        let retries = UInt8(clamping: max(0, state.pinAttemptsLeft))
        w.u8(1)
        w.u8(2); w.u8(applicationState)  // USIM
        w.u8(2); w.u8(0); w.u8(0); w.u8(0)  // personalization ready
        w.u8(UInt8(Self.usimAID.count)); w.append(Self.usimAID)
        w.u8(0)  // UPIN does not replace PIN1
        w.u8(pin1State); w.u8(retries); w.u8(10)
        w.u8(3); w.u8(3); w.u8(10)  // PIN2 disabled
        return QMITLV(0x10, w.bytes)
    }

    // MARK: Slots

    /// Physical Slot Status (0x10), Physical Slot Information (0x11) and Slot EID (0x12) of
    /// every physical slot. An eSIM without an enabled profile is a present eUICC with no ICCID.
    private func slotStatus() -> [QMITLV] {
        var status = ByteWriter(), information = ByteWriter(), eids = ByteWriter()
        status.u8(UInt8(state.slotCount)); information.u8(UInt8(state.slotCount)); eids.u8(UInt8(state.slotCount))
        for slot in 1 ... state.slotCount {
            let sim = state.card(inSlot: slot)
            let euicc = slot == 2 && state.modem.secondSlot?.esim == true
            let active = slot == state.activeSlot
            status.u32(sim != nil || euicc ? 2 : 1)  // present / absent
            status.u32(active ? 1 : 0)
            status.u8(active ? 1 : 0)  // logical slot
            let iccid = sim.map { Self.swappedBCD($0.iccid, bytes: 10) } ?? []
            status.u8(UInt8(iccid.count)); status.append(iccid)
            information.u32(sim != nil || euicc ? 2 : 0)  // UICC / unknown
            information.u8(sim != nil ? 1 : 0)
            let atr = sim != nil || euicc ? Self.atr : []
            information.u8(UInt8(atr.count)); information.append(atr)
            information.u8(euicc ? 1 : 0)
            let eid = euicc ? eid : []
            eids.u8(UInt8(eid.count)); eids.append(eid)
        }
        return [QMITLV(0x10, status.bytes), QMITLV(0x11, information.bytes), QMITLV(0x12, eids.bytes)]
    }

    /// The eUICC's EID: 89049032 then digits of the IMEI, 32 digits in 16 bytes.
    private var eid: [UInt8] {
        let digits = Array(("89049032" + state.modem.imei + String(repeating: "0", count: 32)).prefix(32))
        return stride(from: 0, to: 32, by: 2).map {
            UInt8(digits[$0].hexDigitValue ?? 0) << 4 | UInt8(digits[$0 + 1].hexDigitValue ?? 0)
        }
    }

    // MARK: PIN and files

    private func verifyPIN(_ request: QMIRequest) -> [QMITLV] {
        guard let info = request.tlvs[0x02], info.count >= 2, Int(info[1]) + 2 <= info.count else {
            return [QMUX.result(.missingArgument)]
        }
        guard state.sim != nil else { return [QMUX.result(.uimUninitialized)] }
        guard info[0] == 1 else { return [QMUX.result(.invalidPinID)] }
        let pin = String(decoding: info[2 ..< (2 + Int(info[1]))], as: UTF8.self)
        if !state.pinEnabled || state.pinVerified { return [QMUX.result(.noEffect)] }
        if state.pinAttemptsLeft <= 0 { return [QMUX.result(.pinBlocked), QMITLV(0x10, [0, 10])] }
        if state.verifyPIN(pin) { return [QMUX.result(.none)] }
        let retries = QMITLV(0x10, [UInt8(clamping: max(0, state.pinAttemptsLeft)), 10])
        return [QMUX.result(state.pinAttemptsLeft <= 0 ? .pinBlocked : .incorrectPin), retries]
    }

    /// Read Transparent of EF ICCID (2FE2 under the MF) or EF IMSI (6F07 under ADF USIM, path
    /// 3F00/7FFF); the IMSI only once PIN1 allows. Other files are not found.
    private func readTransparent(_ request: QMIRequest) -> [QMITLV] {
        guard let file = request.tlvs[0x02], let id = ByteReader(file).u16(at: 0),
            let pathLength = file.count > 2 ? file[2] : nil, file.count >= 3 + Int(pathLength)
        else {
            return [QMUX.result(.missingArgument)]
        }
        let path = Array(file[3 ..< (3 + Int(pathLength))])
        guard let sim = state.sim else { return [QMUX.result(.uimUninitialized)] }
        let content: [UInt8]
        switch (id, path) {
        case (0x2FE2, [0x00, 0x3F]): content = Self.swappedBCD(sim.iccid, bytes: 10)
        case (0x6F07, [0x00, 0x3F, 0xFF, 0x7F]):
            guard state.simStatus == .ready else { return [QMUX.result(.accessDenied), QMITLV(0x10, [0x69, 0x82])] }
            content = Self.efIMSI(sim.imsi)
        default: return [QMUX.result(.simFileNotFound), QMITLV(0x10, [0x6A, 0x82])]
        }
        let read = request.tlvs[0x03].map(ByteReader.init)
        let offset = min(content.count, Int(read?.u16(at: 0) ?? 0))
        let length = Int(read?.u16(at: 2) ?? 0)
        let part = Array(content[offset ..< (length == 0 ? content.count : min(content.count, offset + length))])
        var result = ByteWriter()
        result.u16(UInt16(part.count)); result.append(part)
        return [QMUX.result(.none), QMITLV(0x10, [0x90, 0x00]), QMITLV(0x11, result.bytes)]
    }

    /// Digits as TS 102 221 stores EF ICCID: two per byte, low nibble first, padded with F.
    static func swappedBCD(_ digits: String, bytes: Int) -> [UInt8] {
        let nibbles = digits.compactMap { $0.hexDigitValue.map(UInt8.init) } + [UInt8](repeating: 0xF, count: 2 * bytes)
        return (0 ..< bytes).map { nibbles[2 * $0] | nibbles[2 * $0 + 1] << 4 }
    }

    /// EF IMSI (TS 31.102 §4.2.2): a length byte, then the parity nibble and the digits, low nibble first.
    static func efIMSI(_ imsi: String) -> [UInt8] {
        let digits = imsi.compactMap { $0.hexDigitValue.map(UInt8.init) }
        let parity: UInt8 = digits.count % 2 == 1 ? 0x9 : 0x1
        let nibbles = [parity] + digits + [UInt8](repeating: 0xF, count: 16)
        return [8] + (0 ..< 8).map { nibbles[2 * $0] | nibbles[2 * $0 + 1] << 4 }
    }
}
