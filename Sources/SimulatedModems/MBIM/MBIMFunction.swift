import CellpathCore
import SimulatorScenario
import SystemSupport

/// The MBIM function of a simulated modem: OPEN/CLOSE, fragment reassembly and splitting,
/// FUNCTION_ERROR for malformed or unknown messages, the Basic Connect service in the layouts of
/// the MBIMEx version the host negotiated, MS Basic Connect Extensions (MBIMExtensions.swift) and
/// QMI over MBIM (QMIOverMBIM.swift) where the device profile has them. Confined to the modem's
/// server thread.
final class MBIMFunction: ControlFunction {
    /// Largest message accepted from the host; anything claiming more is garbage.
    static let maxInboundMessage = 64 * 1024

    let state: ModemState
    private var opened = false
    /// The MBIMEx version negotiated through MS Basic Connect Extensions Version since OPEN.
    var extensions: DeviceProfile.MBIMExtensions = .none
    /// QMI messages tunnelled over MBIM, served by a QMI function on the same modem state.
    lazy var tunnelledQMI = QMIFunction(state: state)
    private var maxTransfer = 4096
    private var inbox: [UInt8] = []
    private var reassembly: (tid: UInt32, total: UInt32, next: UInt32, data: [UInt8])?
    private var garbageSent = 0
    /// Indications a request caused, sent right after its COMMAND_DONE.
    var pendingIndications: [[UInt8]] = []

    init(state: ModemState) { self.state = state }

    var hasPartialInput: Bool { !inbox.isEmpty }
    func discardPartialInput() { inbox.removeAll() }

    func receive(_ bytes: [UInt8], now: Double) -> [[UInt8]] {
        inbox.append(contentsOf: bytes)
        var out: [[UInt8]] = []
        while inbox.count >= 12 {
            let r = ByteReader(Array(inbox.prefix(12)))
            let type = r.u32(at: 0)!, length = Int(r.u32(at: 4)!), tid = r.u32(at: 8)!
            guard length >= 12, length <= Self.maxInboundMessage else {
                // No way to find the next frame boundary: report and drop everything buffered.
                inbox.removeAll()
                out.append(functionError(.lengthMismatch, tid: tid))
                break
            }
            guard inbox.count >= length else { break }
            let message = Array(inbox[0 ..< length])
            inbox.removeFirst(length)
            out += handle(type: type, tid: tid, message: message, now: now)
        }
        return out
    }

    private func functionError(_ code: MBIMProtocolError, tid: UInt32) -> [UInt8] {
        var w = ByteWriter()
        w.u32(code.rawValue)
        return MBIMFramer.message(.functionError, tid: tid, body: w.bytes)
    }

    private func handle(type: UInt32, tid: UInt32, message: [UInt8], now: Double) -> [[UInt8]] {
        let r = ByteReader(message)
        switch MBIMMessageType(rawValue: type) {
        case .open:
            guard let requested = r.u32(at: 12) else { return [functionError(.lengthMismatch, tid: tid)] }
            maxTransfer = Int(min(max(requested, 64), 4096))
            opened = true
            extensions = .none
            reassembly = nil
            var w = ByteWriter()
            w.u32(MBIMStatus.success.rawValue)
            var out = [MBIMFramer.message(.openDone, tid: tid, body: w.bytes)]
            out += garbage()
            return out
        case .close:
            opened = false
            reassembly = nil
            state.disconnect()
            var w = ByteWriter()
            w.u32(MBIMStatus.success.rawValue)
            return [MBIMFramer.message(.closeDone, tid: tid, body: w.bytes)]
        case .command:
            guard opened else { return [functionError(.notOpened, tid: tid)] }
            return command(tid: tid, message: message, now: now)
        case .hostError:
            reassembly = nil
            return []
        default:
            return [functionError(.unknown, tid: tid)]
        }
    }

    /// The message type of the garbage-frames fault's messages.
    static let junkType: UInt32 = 0x8000_00ee

    func isJunk(_ frame: [UInt8]) -> Bool { ByteReader(frame).u32(at: 0) == Self.junkType }

    /// The garbage-frames fault: well-framed messages of an unknown type with random content.
    private func garbage() -> [[UInt8]] {
        (0 ..< state.modem.faults.garbageFrames).map { _ in
            garbageSent += 1
            let junk = garbageBytes(count: 4 + (garbageSent * 7) % 40, seed: garbageSent)
            var w = ByteWriter()
            w.u32(Self.junkType)
            w.u32(UInt32(12 + junk.count))
            w.u32(0xdead_0000 | UInt32(garbageSent & 0xffff))
            w.append(junk)
            return w.bytes
        }
    }

    /// Reassembles a (possibly fragmented) COMMAND and dispatches it once complete.
    private func command(tid: UInt32, message: [UInt8], now: Double) -> [[UInt8]] {
        let r = ByteReader(message)
        guard let total = r.u32(at: 12), let current = r.u32(at: 16), total >= 1 else {
            return [functionError(.lengthMismatch, tid: tid)]
        }
        let chunk = Array(message[20...])
        var payload: [UInt8]
        if total == 1 && current == 0 {
            reassembly = nil
            payload = chunk
        } else if current == 0 {
            reassembly = (tid, total, 1, chunk)
            return []
        } else {
            guard var partial = reassembly, partial.tid == tid, partial.total == total, partial.next == current else {
                reassembly = nil
                return [functionError(.fragmentOutOfSequence, tid: tid)]
            }
            partial.data += chunk
            partial.next += 1
            guard partial.data.count <= Self.maxInboundMessage else {
                reassembly = nil
                return [functionError(.lengthMismatch, tid: tid)]
            }
            if partial.next < partial.total { reassembly = partial; return [] }
            reassembly = nil
            payload = partial.data
        }
        let p = ByteReader(payload)
        guard let service = p.slice(0, 16), let cid = p.u32(at: 16), let kind = p.u32(at: 20),
            let infoLength = p.u32(at: 24), let info = p.slice(28, Int(infoLength))
        else {
            return [functionError(.lengthMismatch, tid: tid)]
        }
        let (status, response): (MBIMStatus, [UInt8]) =
            switch service {
            case MBIMUUID.basicConnect: basicConnect(cid: cid, set: kind == 1, info: info, now: now)
            case MBIMUUID.msBasicConnectExtensions: basicConnectExtensions(cid: cid, set: kind == 1, info: info)
            case MBIMUUID.qmi where state.modem.profile.fccUnlock == .qmiOverMBIM:
                qmiMessage(cid: cid, info: info, now: now)
            default: (.noDeviceSupport, [])
            }
        defer { pendingIndications = [] }
        return MBIMFramer.fragmented(
            .commandDone, tid: tid, service: service, cid: cid,
            status: status.rawValue, info: response, maxTransfer: maxTransfer)
            + pendingIndications
    }

    private func indication(cid: MBIMBasicConnectCID, _ info: [UInt8]) -> [[UInt8]] {
        indication(service: MBIMUUID.basicConnect, cid: cid.rawValue, info)
    }

    func indication(service: [UInt8], cid: UInt32, _ info: [UInt8]) -> [[UInt8]] {
        guard opened else { return [] }
        return MBIMFramer.fragmented(
            .indicateStatus, tid: 0, service: service, cid: cid,
            status: nil, info: info, maxTransfer: maxTransfer)
    }

    /// MBIM's dual stack is one session: it drops whole, whatever `family`.
    func bearerDropped(cause: Int, family: BearerIPType?) -> [[UInt8]] {
        state.disconnect()
        return indication(
            cid: .connect, connectInfo(session: 0, activated: false, nwError: UInt32(truncatingIfNeeded: cause)))
    }

    func registrationChanged() -> [[UInt8]] {
        var out: [[UInt8]] = []
        if !state.isRegistered, state.bearer != nil {
            out += bearerDropped(cause: 0, family: nil)
        }
        out += indication(cid: .registerState, registerStateInfo())
        out += indication(cid: .packetService, packetServiceInfo())
        return out
    }

    /// Subscriber Ready Status (not-inserted, or the new SIM's state), then registration and
    /// packet service, after the bearer's deactivation when one was up.
    func simChanged(to sim: SimulatedSIM?) -> [[UInt8]] {
        var out = state.bearer != nil ? bearerDropped(cause: 0, family: nil) : []
        state.changeSIM(sim)
        out += indication(cid: .subscriberReadyStatus, subscriberReadyInfo())
        out += indication(cid: .registerState, registerStateInfo())
        out += indication(cid: .packetService, packetServiceInfo())
        return out
    }

    func shutdown() {
        state.disconnect()
        opened = false
    }

    // MARK: Basic Connect

    private func basicConnect(cid: UInt32, set: Bool, info: [UInt8], now: Double) -> (MBIMStatus, [UInt8]) {
        guard let command = MBIMBasicConnectCID(rawValue: cid) else { return (.noDeviceSupport, []) }
        switch (command, set) {
        case (.deviceCaps, false): return (.success, deviceCapsInfo())
        case (.subscriberReadyStatus, false): return (.success, subscriberReadyInfo())
        case (.radioState, false): return (.success, radioStateInfo())
        case (.radioState, true): return setRadioState(info)
        case (.pin, false): return queryPIN()
        case (.pin, true): return setPIN(info)
        case (.pinList, false): return state.simStatus == .absent ? (.simNotInserted, []) : (.success, pinListInfo())
        case (.packetStatistics, false): return (.success, [UInt8](repeating: 0, count: 48))  // nothing counted
        case (.homeProvider, false): return homeProvider()
        case (.registerState, false): return (.success, registerStateInfo())
        case (.packetService, false): return state.radioOn ? (.success, packetServiceInfo()) : (.radioPowerOff, [])
        case (.packetService, true): return state.radioOn ? (.success, packetServiceInfo()) : (.radioPowerOff, [])
        case (.signalState, _): return (.success, signalStateInfo())
        case (.connect, true): return setConnect(info, now: now)
        case (.connect, false): return queryConnect(info)
        case (.ipConfiguration, false): return ipConfiguration(info)
        case (.deviceServices, false): return (.success, deviceServicesInfo())
        case (.deviceServiceSubscribeList, true): return (.success, info)
        default: return (.noDeviceSupport, [])
        }
    }

    private func deviceCapsInfo() -> [UInt8] {
        let m = state.modem
        var b = MBIMInfoBuilder()
        b.u32(1)  // device type: embedded
        b.u32(1)  // cellular class: GSM
        b.u32(1)  // voice class: no voice
        b.u32(2)  // SIM class: removable
        b.u32(0x3f)  // data class: GPRS | EDGE | UMTS | HSDPA | HSUPA | LTE
        b.u32(0x3)  // SMS caps: PDU receive | PDU send
        b.u32(0x1)  // control caps: manual registration
        b.u32(1)  // max sessions
        b.string("")
        b.string(m.imei)
        b.string(m.firmware)
        b.string(m.model)
        return b.build()
    }

    /// The services and CIDs this function implements: Basic Connect, and as the device profile
    /// has them MS Basic Connect Extensions and QMI over MBIM.
    private func deviceServicesInfo() -> [UInt8] {
        let cids: [MBIMBasicConnectCID] = [
            .deviceCaps, .subscriberReadyStatus, .radioState, .pin, .pinList, .homeProvider,
            .registerState, .packetService, .signalState, .connect,
            .ipConfiguration, .deviceServices, .deviceServiceSubscribeList,
            .packetStatistics
        ]
        var services = [(MBIMUUID.basicConnect, cids.map(\.rawValue))]
        let extensionCIDs = extensionsServiceCIDs
        if !extensionCIDs.isEmpty {
            services.append((MBIMUUID.msBasicConnectExtensions, extensionCIDs.map(\.rawValue)))
        }
        if state.modem.profile.fccUnlock == .qmiOverMBIM { services.append((MBIMUUID.qmi, [1])) }
        var b = MBIMInfoBuilder()
        b.u32(UInt32(services.count))
        b.u32(0)  // max DSS sessions
        for (uuid, serviceCIDs) in services {
            var element = ByteWriter()
            element.append(uuid)
            element.u32(0)  // DSS payload: none
            element.u32(0)  // max DSS instances
            element.u32(UInt32(serviceCIDs.count))
            for cid in serviceCIDs { element.u32(cid) }
            b.structure(element.bytes)
        }
        return b.build()
    }

    /// Queues the indications a real function sends when the SIM or the radio changed.
    private func indicateStateChange(subscriber: Bool) {
        if subscriber { pendingIndications += indication(cid: .subscriberReadyStatus, subscriberReadyInfo()) }
        pendingIndications += indication(cid: .registerState, registerStateInfo())
        pendingIndications += indication(cid: .packetService, packetServiceInfo())
    }

    /// Subscriber Ready Status: v1, or with MBIMEx v3 the layout with its flags field after the
    /// ready state. An eSIM without an enabled profile is NO_ESIM_PROFILE (7); `initializing`
    /// reports NOT_INITIALIZED (0), as while the firmware reads a card after a slot switch.
    func subscriberReadyInfo(initializing: Bool = false) -> [UInt8] {
        var b = MBIMInfoBuilder()
        let (readyState, imsi, iccid, msisdn): (UInt32, String, String, String?) =
            switch state.simStatus {
            case _ where initializing: (0, "", "", nil)
            case .absent: (state.esimWithoutProfile ? 7 : 2, "", "", nil)  // no eSIM profile / SIM not inserted
            case .pinLocked: (6, "", state.sim?.iccid ?? "", nil)  // device locked
            case .ready: (1, state.sim!.imsi, state.sim!.iccid, state.sim!.msisdn)  // initialized
            }
        b.u32(readyState)
        // Flags: ESIM for the eSIM slot, else SIM_REMOVABILITY_KNOWN | SIM_REMOVABLE.
        if extensions >= .v3 { b.u32(state.activeSlotIsESIM ? 0x1 : 0x6) }
        b.string(imsi); b.string(iccid)
        b.u32(0)  // ready info: none
        if let msisdn { b.u32(1); b.string(msisdn) } else { b.u32(0) }
        return b.build()
    }

    private func radioStateInfo() -> [UInt8] {
        var b = MBIMInfoBuilder()
        b.u32(1)
        b.u32(state.radioOn ? 1 : 0)
        return b.build()
    }

    private func setRadioState(_ info: [UInt8]) -> (MBIMStatus, [UInt8]) {
        guard let requested = MBIMInfoReader(info).u32(at: 0), requested <= 1 else { return (.invalidParameters, []) }
        // An FCC-locked module refuses radio-on until unlocked (ModemManager then runs fcc-unlock.d).
        if requested == 1, state.fccLocked { return (.operationNotAllowed, []) }
        let wasOn = state.radioOn
        state.radioOn = requested == 1
        if wasOn != state.radioOn {
            if !state.radioOn, state.disconnect() {
                pendingIndications += indication(cid: .connect, connectInfo(session: 0, activated: false, nwError: 0))
            }
            indicateStateChange(subscriber: false)
        }
        return (.success, radioStateInfo())
    }

    private func pinInfo() -> [UInt8] {
        var b = MBIMInfoBuilder()
        if state.pinAttemptsLeft <= 0 && state.pinEnabled && !state.pinVerified {
            b.u32(11); b.u32(1); b.u32(10)  // PUK1 locked, 10 attempts
        } else if state.simStatus == .pinLocked {
            b.u32(2); b.u32(1); b.u32(UInt32(clamping: state.pinAttemptsLeft))  // PIN1 locked
        } else {
            b.u32(0); b.u32(0); b.u32(UInt32(clamping: state.pinAttemptsLeft))  // none, unlocked
        }
        return b.build()
    }

    /// The ten PIN descriptions of PIN_LIST: PIN1 (numeric, 4 to 8 digits) enabled or disabled as the
    /// scenario's SIM, the others not supported.
    private func pinListInfo() -> [UInt8] {
        var b = MBIMInfoBuilder()
        b.u32(state.pinEnabled ? 1 : 2); b.u32(1); b.u32(4); b.u32(8)
        for _ in 1 ..< 10 { b.u32(0); b.u32(0); b.u32(0); b.u32(0) }
        return b.build()
    }

    private func queryPIN() -> (MBIMStatus, [UInt8]) {
        state.simStatus == .absent ? (.simNotInserted, []) : (.success, pinInfo())
    }

    private func setPIN(_ info: [UInt8]) -> (MBIMStatus, [UInt8]) {
        let r = MBIMInfoReader(info)
        guard state.simStatus != .absent else { return (.simNotInserted, []) }
        guard let type = r.u32(at: 0), let operation = r.u32(at: 4), let pin = r.string(at: 8) else {
            return (.invalidParameters, [])
        }
        guard type == 2, operation == 0 else { return (.operationNotAllowed, pinInfo()) }  // PIN1 enter only
        guard state.simStatus == .pinLocked else { return (.pinDisabled, pinInfo()) }
        guard state.verifyPIN(pin) else { return (.failure, pinInfo()) }
        indicateStateChange(subscriber: true)
        return (.success, pinInfo())
    }

    private func homeProvider() -> (MBIMStatus, [UInt8]) {
        switch state.simStatus {
        case .absent: return (.simNotInserted, [])
        case .pinLocked: return (.pinRequired, [])
        case .ready: break
        }
        let home = state.homePLMN
        var b = MBIMInfoBuilder()
        b.string(home.mcc + home.mnc)
        b.u32(1)  // provider state: home
        b.string(state.homeOperatorName)
        b.u32(1)  // GSM
        b.u32(99)  // RSSI unknown
        b.u32(99)  // error rate unknown
        return (.success, b.build())
    }

    private func registerStateInfo() -> [UInt8] {
        let registration = state.registration
        let (code, nwError): (UInt32, UInt32) =
            switch registration {
            case .radioOff, .deregistered: (1, 0)
            case .searching: (2, 0)
            case .home: (3, 0)
            case .roaming: (4, 0)
            case .denied: (6, 11)  // PLMN not allowed
            }
        let registered = state.isRegistered
        let network = state.network
        var b = MBIMInfoBuilder()
        b.u32(nwError)
        b.u32(code)
        b.u32(1)  // automatic
        // LTE; also the network that denied registration, as modems report it (ModemManager files
        // the denial under that technology's domain: without one it shows idle, not denied).
        b.u32(registered || registration == .denied ? state.servingCell.rat.mbimDataClass : 0)
        b.u32(1)  // GSM
        b.string(registered || registration == .denied ? network.mcc + network.mnc : "")
        b.string(registered ? network.operatorName : "")
        b.string(registration == .roaming ? "Roaming" : "")
        b.u32(2)  // packet service automatic attach
        if extensions >= .v2 { b.u32(0x20) }  // preferred data classes: LTE
        return b.build()
    }

    private func packetServiceInfo() -> [UInt8] {
        let attached = state.isRegistered
        var b = MBIMInfoBuilder()
        b.u32(0)
        b.u32(attached ? 2 : 4)  // attached / detached
        b.u32(attached ? state.servingCell.rat.mbimDataClass : 0)  // the same bits in MbimDataClassV3
        b.u64(attached ? 50_000_000 : 0)
        b.u64(attached ? 150_000_000 : 0)
        if extensions >= .v2 { b.u32(attached ? 1 : 0) }  // frequency range: FR1 / unknown
        if extensions >= .v3 {
            b.u32(0)  // data subclass: none (LTE)
            let network = state.network
            b.u32(UInt32(UInt16(network.mcc) ?? 0) | UInt32(UInt16(network.mnc) ?? 0) << 16)  // TAI: MCC, MNC
            b.u32(attached ? 1 : 0)  // TAI: TAC
        }
        return b.build()
    }

    private func signalStateInfo() -> [UInt8] {
        var b = MBIMInfoBuilder()
        if let dbm = state.rssiDbm { b.u32(UInt32(min(31, max(0, (dbm + 113) / 2)))) } else { b.u32(99) }
        b.u32(99)  // error rate unknown
        b.u32(0); b.u32(0); b.u32(0)
        if extensions >= .v2 { rsrpSNR(into: &b) }
        return b.build()
    }

    /// MBIMEx v2's RSRP/SNR list: one entry for an LTE serving cell (RSRP coded as dBm + 156,
    /// SNR as (dB + 23) × 2, thresholds unset), none otherwise.
    private func rsrpSNR(into b: inout MBIMInfoBuilder) {
        let cell = state.servingCell
        guard state.isRegistered, cell.rat == .lte else {
            b.offset(to: []); b.u32(0)
            return
        }
        var list = ByteWriter()
        list.u32(1)
        list.u32(UInt32(cell.rsrpDbm + 156))
        list.u32(UInt32(((cell.sinrDb + 23) * 2).rounded()))
        list.u32(0xffff_ffff); list.u32(0xffff_ffff)
        list.u32(cell.rat.mbimDataClass)
        b.structure(list.bytes)
    }

    private func connectInfo(session: UInt32, activated: Bool, nwError: UInt32) -> [UInt8] {
        var b = MBIMInfoBuilder()
        b.u32(session)
        b.u32(activated ? 1 : 3)  // activated / deactivated
        b.u32(0)  // no voice call
        b.u32(activated ? Self.wireIPType(state.bearer?.assignment.ipType ?? .ipv4) : 0)  // granted type / default
        b.bytes(MBIMUUID.contextInternet)
        b.u32(nwError)
        if extensions >= .v3 {
            b.u32(0)  // media preference: cellular only
            b.tlvString(state.bearer?.apn ?? "")
        }
        return b.build()
    }

    /// MBIM_CONTEXT_IP_TYPE of a granted type: IPv4 1, IPv6 2, IPv4v6 3.
    private static func wireIPType(_ type: BearerIPType) -> UInt32 {
        switch type {
        case .ipv4: 1
        case .ipv6: 2
        case .ipv4v6: 3
        }
    }

    /// The families a connect's MBIM_CONTEXT_IP_TYPE asks for: IPv4 1, IPv6 2, IPv4v6 3; default 0
    /// and "IPv4 and IPv6" 4 (and anything unknown) ask for whatever the network offers.
    private static func requestedIPType(_ wire: UInt32) -> BearerIPType {
        switch wire {
        case 1: .ipv4
        case 2: .ipv6
        default: .ipv4v6
        }
    }

    private func setConnect(_ info: [UInt8], now: Double) -> (MBIMStatus, [UInt8]) {
        let r = MBIMInfoReader(info)
        // v1: session, activation, access string, user name, password (references), compression,
        // auth, IP type at 40; v3: session, activation, compression, auth, IP type at 16, context
        // type, media preference, then the access string as a TLV at 40.
        let v3 = extensions >= .v3
        guard let session = r.u32(at: 0), let activation = r.u32(at: 4),
            let apn = v3 ? r.tlvString(at: 40) : r.string(at: 8),
            let ipType = r.u32(at: v3 ? 16 : 40)
        else { return (.invalidParameters, []) }
        guard session == 0 else { return (.invalidParameters, []) }
        if activation == 0 {
            guard state.disconnect() else {
                return (.contextNotActivated, connectInfo(session: session, activated: false, nwError: 0))
            }
            return (.success, connectInfo(session: session, activated: false, nwError: 0))
        }
        guard activation == 1 else { return (.invalidParameters, []) }
        switch state.connect(apn: apn, requested: Self.requestedIPType(ipType), now: now) {
        case .success:
            return (.success, connectInfo(session: session, activated: true, nwError: 0))
        case .failure(let refusal):
            switch refusal {
            case .noSIM: return (.simNotInserted, [])
            case .pinRequired: return (.pinRequired, [])
            case .radioOff: return (.radioPowerOff, [])
            case .notRegistered: return (.notRegistered, [])
            case .network(let cause):
                return (
                    .failure,
                    connectInfo(session: session, activated: false, nwError: UInt32(truncatingIfNeeded: cause))
                )
            case .networkRefused:
                return (.failure, connectInfo(session: session, activated: false, nwError: 26))
            }
        }
    }

    private func queryConnect(_ info: [UInt8]) -> (MBIMStatus, [UInt8]) {
        let session = MBIMInfoReader(info).u32(at: 0) ?? 0
        guard session == 0 else { return (.invalidParameters, []) }
        return (.success, connectInfo(session: session, activated: state.bearer != nil, nwError: 0))
    }

    private func ipConfiguration(_ info: [UInt8]) -> (MBIMStatus, [UInt8]) {
        let session = MBIMInfoReader(info).u32(at: 0) ?? 0
        guard session == 0 else { return (.invalidParameters, []) }
        guard let bearer = state.bearer else { return (.contextNotActivated, []) }
        let a = bearer.assignment
        /// One family's element (prefix length + address), gateway, DNS and availability flags.
        func family(
            _ settings: FamilyAssignment?, bytes: (String) -> [UInt8]?
        ) -> (flags: UInt32, element: [UInt8], gateway: [UInt8], dns: [[UInt8]]) {
            guard let settings, let address = bytes(settings.address) else { return (0, [], [], []) }
            let gateway = bytes(settings.gateway) ?? []
            let dns = settings.dnsServers.compactMap(bytes)
            var element = ByteWriter()
            element.u32(UInt32(clamping: settings.prefixLength))
            element.append(address)
            // address, gateway, DNS, MTU
            return (0x1 | (gateway.isEmpty ? 0 : 0x2) | (dns.isEmpty ? 0 : 0x4) | 0x8, element.bytes, gateway, dns)
        }
        let v4 = family(a.ipv4, bytes: IPAddress.ipv4Bytes)
        let v6 = family(a.ipv6, bytes: IPAddress.ipv6Bytes)
        var b = MBIMInfoBuilder()
        b.u32(session)
        b.u32(v4.flags)
        b.u32(v6.flags)
        b.u32(v4.element.isEmpty ? 0 : 1); b.offset(to: v4.element)
        b.u32(v6.element.isEmpty ? 0 : 1); b.offset(to: v6.element)
        b.offset(to: v4.gateway)
        b.offset(to: v6.gateway)
        b.u32(UInt32(v4.dns.count)); b.offset(to: v4.dns.flatMap { $0 })
        b.u32(UInt32(v6.dns.count)); b.offset(to: v6.dns.flatMap { $0 })
        b.u32(a.ipv4 == nil ? 0 : UInt32(clamping: a.mtu))
        b.u32(a.ipv6 == nil ? 0 : UInt32(clamping: a.mtu))
        return (.success, b.build())
    }
}
