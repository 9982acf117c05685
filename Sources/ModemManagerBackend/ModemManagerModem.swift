import CGIO
import CModemManager
import CellpathCore
import GLibRuntime
import ModemDiscovery
import Modems

/// A modem through ModemManager's D-Bus API (libmm-glib): its properties as ModemManager
/// publishes them, its SIM and bearer objects. ModemManager owns the modem: reading sends
/// nothing to it, and only the bearers that cellpath creates are disconnected and deleted.
@GLibActor
final class ModemManagerModem: ModemBackend {
    nonisolated let port: ControlPort
    nonisolated var backendName: ModemBackendName { .modemManager }
    /// ModemManager aligns a QMI modem's data format and qmi_wwan's `raw_ip` itself.
    nonisolated var preparesDataPath: Bool { true }
    private(set) var session: ModemManagerSession
    /// The modem's object (a reference of ours), with its Modem and Modem3gpp interfaces.
    let object: UnsafeMutablePointer<MMObject>
    private var isOpen = true
    /// The "notify" handlers of the modem and its 3GPP interface, once indications are followed.
    var notifyHandlers: [(gpointer, gulong)] = []
    var indicationSink: IndicationSink?

    init(port: ControlPort, object: UnsafeMutablePointer<MMObject>, session: ModemManagerSession) {
        self.port = port
        self.object = object
        self.session = session
    }

    var modem: UnsafeMutablePointer<MMModem> { mm_object_peek_modem(object) }
    var modem3gpp: UnsafeMutablePointer<MMModem3gpp>? { mm_object_peek_modem_3gpp(object) }
    /// The modem's D-Bus path (`/org/freedesktop/ModemManager1/Modem/0`).
    var path: String { String(cString: mm_object_get_path(object)) }

    func renewTimeLimit() async { session = session.renewed() }

    func close() async {
        guard isOpen else { return }
        isOpen = false
        for (instance, handler) in notifyHandlers { g_signal_handler_disconnect(instance, handler) }
        notifyHandlers = []
        indicationSink?.finish()
        g_object_unref(gpointer(object))
    }

    /// The names of a modem's ports (`cdc-wdm0`, `wwan0`).
    nonisolated static func portNames(_ modem: UnsafeMutablePointer<MMModem>) -> [String] {
        var ports: UnsafeMutablePointer<MMModemPortInfo>?
        var count: guint = 0
        guard mm_modem_get_ports(modem, &ports, &count) != 0, let ports else { return [] }
        defer { mm_modem_port_info_array_free(ports, count) }
        return (0 ..< Int(count)).compactMap { ports[$0].name.map { String(cString: $0) } }
    }

    // MARK: Reads

    func identity() async throws(ModemError) -> ModemIdentity {
        ModemIdentity(
            manufacturer: text(mm_modem_get_manufacturer(modem)), model: text(mm_modem_get_model(modem)),
            firmware: text(mm_modem_get_revision(modem)), imei: text(mm_modem_get_equipment_identifier(modem)))
    }

    func sim() async throws(ModemError) -> SIMStatus {
        var status = try await simState()
        guard status.state == .ready, let sim = try await loadSIM() else { return status }
        defer { g_object_unref(gpointer(sim)) }
        status.iccid = text(mm_sim_get_identifier(sim))
        status.imsi = text(mm_sim_get_imsi(sim))
        status.msisdns = texts(mm_modem_get_own_numbers(modem))
        return status
    }

    func simState() async throws(ModemError) -> SIMStatus {
        let state = mm_modem_get_state(modem)
        if state == MM_MODEM_STATE_FAILED {
            switch mm_modem_get_state_failed_reason(modem) {
            case MM_MODEM_STATE_FAILED_REASON_SIM_MISSING: return SIMStatus(state: .absent)
            case MM_MODEM_STATE_FAILED_REASON_SIM_ERROR: return SIMStatus(state: .failed)
            case MM_MODEM_STATE_FAILED_REASON_ESIM_WITHOUT_PROFILES: return SIMStatus(state: .esimWithoutProfile)
            default: break
            }
        }
        switch mm_modem_get_unlock_required(modem) {
        case MM_MODEM_LOCK_NONE, MM_MODEM_LOCK_SIM_PIN2, MM_MODEM_LOCK_SIM_PUK2:
            // PIN2 guards fixed dialling only: ModemManager enables and connects with it.
            return SIMStatus(state: text(mm_modem_get_sim_path(modem)) == nil ? .absent : .ready)
        case MM_MODEM_LOCK_SIM_PIN:
            return SIMStatus(state: .pinRequired, pinRetries: retries(MM_MODEM_LOCK_SIM_PIN))
        case MM_MODEM_LOCK_SIM_PUK:
            return SIMStatus(state: .pukRequired)
        default:
            return SIMStatus(state: .notReady)
        }
    }

    /// The attempts left for `lock`, when ModemManager knows them.
    private func retries(_ lock: MMModemLock) -> Int? {
        guard let retries = mm_modem_get_unlock_retries(modem) else { return nil }
        defer { g_object_unref(gpointer(retries)) }
        let left = mm_unlock_retries_get(retries, lock)
        return left == UInt32(MM_UNLOCK_RETRIES_UNKNOWN) ? nil : Int(left)
    }

    /// The modem's SIM object (a reference of the caller's); nil without one.
    func loadSIM() async throws(ModemError) -> UnsafeMutablePointer<MMSim>? {
        guard text(mm_modem_get_sim_path(modem)) != nil else { return nil }
        let modem = self.modem
        return try await session.call("read the SIM") { call in
            mm_modem_get_sim(modem, call.cancellable, call.callback, call.userData)
        } finish: { result throws(GLibError) in
            var error: UnsafeMutablePointer<GError>?
            let sim = mm_modem_get_sim_finish(modem, result, &error)
            if sim == nil, error != nil { throw GLibError(taking: error) }
            return sim
        }
    }

    /// On once ModemManager enabled the modem (its radio on); off while disabled or locked.
    func radio() async throws(ModemError) -> RadioState {
        mm_modem_get_state(modem).rawValue >= MM_MODEM_STATE_ENABLED.rawValue ? .on : .off
    }

    func homeOperator() async throws(ModemError) -> NetworkOperator? {
        guard let sim = try await loadSIM() else { return nil }
        defer { g_object_unref(gpointer(sim)) }
        let digits = text(mm_sim_get_operator_identifier(sim))
        let name = text(mm_sim_get_operator_name(sim))
        guard digits != nil || name != nil else { return nil }
        return NetworkOperator(id: digits.flatMap(NetworkOperator.plmnID) ?? digits, name: name)
    }

    func registration() async throws(ModemError) -> Registration {
        Self.registration(object)
    }

    /// The registration as the modem's 3GPP interface and access technologies publish it. Loop thread.
    nonisolated static func registration(_ object: UnsafeMutablePointer<MMObject>) -> Registration {
        guard let modem = mm_object_peek_modem(object), let modem3gpp = mm_object_peek_modem_3gpp(object) else {
            return Registration(state: .unknown)
        }
        let state: RegistrationState =
            switch mm_modem_3gpp_get_registration_state(modem3gpp) {
            case MM_MODEM_3GPP_REGISTRATION_STATE_HOME, MM_MODEM_3GPP_REGISTRATION_STATE_HOME_SMS_ONLY,
                MM_MODEM_3GPP_REGISTRATION_STATE_HOME_CSFB_NOT_PREFERRED:
                .home
            case MM_MODEM_3GPP_REGISTRATION_STATE_ROAMING, MM_MODEM_3GPP_REGISTRATION_STATE_ROAMING_SMS_ONLY,
                MM_MODEM_3GPP_REGISTRATION_STATE_ROAMING_CSFB_NOT_PREFERRED:
                .roaming
            case MM_MODEM_3GPP_REGISTRATION_STATE_SEARCHING: .searching
            case MM_MODEM_3GPP_REGISTRATION_STATE_DENIED: .denied
            case MM_MODEM_3GPP_REGISTRATION_STATE_IDLE, MM_MODEM_3GPP_REGISTRATION_STATE_EMERGENCY_ONLY: .notRegistered
            default: mm_modem_get_state(modem).rawValue < MM_MODEM_STATE_ENABLED.rawValue ? .notRegistered : .unknown
            }
        var registration = Registration(state: state)
        if registration.isRegistered {
            let digits = text(mm_modem_3gpp_get_operator_code(modem3gpp))
            registration.servingOperator = NetworkOperator(
                id: digits.flatMap(NetworkOperator.plmnID) ?? digits,
                name: text(mm_modem_3gpp_get_operator_name(modem3gpp)))
            registration.accessTechnology = accessTechnology(mm_modem_get_access_technologies(modem))
        }
        return registration
    }

    /// The most capable technology of ModemManager's mask.
    nonisolated static func accessTechnology(_ mask: MMModemAccessTechnology) -> AccessTechnology? {
        func has(_ technology: MMModemAccessTechnology) -> Bool { mask.rawValue & technology.rawValue != 0 }
        if has(MM_MODEM_ACCESS_TECHNOLOGY_5GNR) { return .nr5g }
        if has(MM_MODEM_ACCESS_TECHNOLOGY_LTE) { return .lte }
        if has(MM_MODEM_ACCESS_TECHNOLOGY_HSPA) || has(MM_MODEM_ACCESS_TECHNOLOGY_HSDPA)
            || has(MM_MODEM_ACCESS_TECHNOLOGY_HSUPA)
            || has(MM_MODEM_ACCESS_TECHNOLOGY_HSPA_PLUS)
        {
            return .hspa
        }
        if has(MM_MODEM_ACCESS_TECHNOLOGY_UMTS) { return .umts }
        if has(MM_MODEM_ACCESS_TECHNOLOGY_EDGE) { return .edge }
        if has(MM_MODEM_ACCESS_TECHNOLOGY_GPRS) { return .gprs }
        if has(MM_MODEM_ACCESS_TECHNOLOGY_GSM) || has(MM_MODEM_ACCESS_TECHNOLOGY_GSM_COMPACT) { return .gsm }
        if has(MM_MODEM_ACCESS_TECHNOLOGY_1XRTT) || has(MM_MODEM_ACCESS_TECHNOLOGY_EVDO0)
            || has(MM_MODEM_ACCESS_TECHNOLOGY_EVDOA)
            || has(MM_MODEM_ACCESS_TECHNOLOGY_EVDOB)
        {
            return .cdma
        }
        return mask == MM_MODEM_ACCESS_TECHNOLOGY_UNKNOWN ? nil : .other
    }

    /// ModemManager publishes a quality percentage, not the dBm values cellpath reports: none.
    func signal() async throws(ModemError) -> Signal? { nil }

    /// Attached as ModemManager tells it; when it does not know, a registered modem counts as
    /// attached (ModemManager attaches when it connects).
    func packetService() async throws(ModemError) -> PacketServiceState {
        guard let modem3gpp else { return .unknown }
        switch mm_modem_3gpp_get_packet_service_state(modem3gpp) {
        case MM_MODEM_3GPP_PACKET_SERVICE_STATE_ATTACHED: return .attached
        case MM_MODEM_3GPP_PACKET_SERVICE_STATE_DETACHED: return .detached
        default: return Self.registration(object).isRegistered ? .attached : .unknown
        }
    }
}

/// A C string ModemManager owns, copied; nil when NULL, empty, or D-Bus's "no object" path `/`.
func text(_ value: UnsafePointer<gchar>?) -> String? {
    guard let value else { return nil }
    let copied = String(cString: value).trimmingCharacters(in: " ")
    return copied.isEmpty || copied == "/" ? nil : copied
}

/// A NULL-terminated string array ModemManager owns, copied; empty strings dropped.
func texts(_ list: UnsafePointer<UnsafePointer<gchar>?>?) -> [String] {
    guard let list else { return [] }
    var items: [String] = []
    var index = 0
    while let item = list[index] {
        if let value = text(item) { items.append(value) }
        index += 1
    }
    return items
}

extension String {
    func trimmingCharacters(in character: Character) -> String {
        var text = Substring(self)
        while text.first == character { text = text.dropFirst() }
        while text.last == character { text = text.dropLast() }
        return String(text)
    }
}
