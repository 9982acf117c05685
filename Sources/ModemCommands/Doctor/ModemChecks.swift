import Bearers
import CellpathCore
import CommandLineKit
import Glibc
import IPConfiguration
import ModemDiscovery
import SystemSupport

/// The checks of one modem: its shape, who holds it, access, FCC lock, SIM, registration, data
/// format, and its bearer's interface against what cellpath needs (and `--fix` of rp_filter).
struct ModemChecks {
    let report: ModemReport
    let roots: DeviceRoots
    let disclosure: Disclosure
    let modemManager: Bool
    let records: BearerRecords
    let fix: Bool
    /// Where ModemManager's FCC-unlock scripts are listed (its package's directory).
    let fccUnlockList: String
    /// The bearer's path when it is connected and its interface holds its address (for the DNS check).
    var usablePath: CellularPath?
    /// Whether cellpath's record names a bearer the modem reports down (`--fix` removes it).
    var staleRecord = false

    init(
        report: ModemReport, roots: DeviceRoots, disclosure: Disclosure, modemManager: Bool, records: BearerRecords,
        fix: Bool, fccUnlockList: String = FCCUnlockList.available
    ) {
        self.report = report
        self.roots = roots
        self.disclosure = disclosure
        self.modemManager = modemManager
        self.records = records
        self.fix = fix
        self.fccUnlockList = fccUnlockList
    }

    var modem: DiscoveredModem { report.modem }
    private var status: ModemStatus? { report.status?.redacted(disclosure) }
    private var root: Bool { geteuid() == 0 }

    func check(
        _ name: String, _ status: DoctorCheck.Status, _ summary: String, evidence: [String] = [],
        remedy: String? = nil
    ) -> DoctorCheck {
        DoctorCheck(name, modem: modem.index, status, summary, evidence: evidence, remedy: remedy)
    }

    mutating func all() -> [DoctorCheck] {
        var checks = [shape(), owners(), access(), reading()]
        guard report.status != nil else { return checks }
        checks += [radio(), sim()]
        if let slots = simSlots() { checks.append(slots) }
        checks.append(registration())
        if let format = dataFormat() { checks.append(format) }
        checks += bearer()
        return checks
    }

    /// Bus, driver, ports, net devices, ids and model.
    func shape() -> DoctorCheck {
        let bus = modem.devicePath.contains("/usb") ? "usb" : modem.devicePath.contains("/pci") ? "pcie" : "unknown"
        let driver = HostProbes.linkName(modem.devicePath + "/driver")
        var evidence = [
            "bus: \(bus)", "driver: \(driver ?? "unknown")", "device: \(modem.devicePath)",
            "protocol: \(modem.protocol.rawValue.uppercased())",
            "control ports: \(modem.ports.map(\.name).joined(separator: ", "))",
            "net devices: \(modem.interfaces.isEmpty ? "none" : modem.interfaces.joined(separator: ", "))"
        ]
        if let vendor = modem.usbVendorID { evidence.append("id: \(vendor):\(modem.usbProductID ?? "?")") }
        let model = status?.model ?? modem.model ?? "modem"
        evidence.append("model: \(model)\(status?.firmware.map { ", firmware \($0)" } ?? "")")
        guard !modem.interfaces.isEmpty else {
            return check(
                "modem", .fail, "\(model) has no network interface: no data path", evidence: evidence,
                remedy: "check the driver of its net device (qmi_wwan, cdc_mbim, mhi_net) is loaded")
        }
        let kind = "\(modem.protocol.rawValue.uppercased()) over \(bus)"
        return check("modem", .pass, "\(model) (\(kind)) on \(modem.ports[0].name)", evidence: evidence)
    }

    /// ModemManager, NetworkManager, the proxies and any other process holding the control port open.
    func owners() -> DoctorCheck {
        var evidence = [
            "ModemManager: \(modemManager ? "running on the system bus" : "not running")",
            "NetworkManager: \(HostProbes.isRunning("NetworkManager") ? "running" : "not running")"
        ]
        var others: [HostProbes.Holder] = []
        var unreadable = 0
        for port in modem.ports {
            let found = HostProbes.holders(of: port.devicePath)
            unreadable = max(unreadable, found.unreadable)
            for holder in found.holders {
                // In a simulated world, the simulator holds the port: it is the modem.
                let isSimulator = modem.isSimulated && holder.name == Program.helper.rawValue
                evidence.append(
                    "\(port.name) held open by \(holder.name) (pid \(holder.pid))"
                        + (isSimulator ? ": the simulated modem" : ""))
                if !isSimulator && !["mbim-proxy", "qmi-proxy", "ModemManager"].contains(holder.name) {
                    others.append(holder)
                }
            }
        }
        if let backend = status?.backend { evidence.append("read through: \(backend.rawValue)") }
        if !others.isEmpty {
            let names = Set(others.map(\.name)).sorted().joined(separator: ", ")
            return check(
                "owners", .warn, "another program holds the control port: \(names)", evidence: evidence,
                remedy: "stop it, or let it use mbim-proxy/qmi-proxy (mbimcli -p, qmicli -p) "
                    + "so that the port is shared")
        }
        if unreadable > 0 && !root {
            evidence.append("the descriptors of \(unreadable) processes could not be read")
            return check(
                "owners", .warn, "couldn't see every process holding the port", evidence: evidence,
                remedy: "run cellpath doctor with sudo")
        }
        let owner = modemManager ? "ModemManager manages it" : "no other program holds it"
        return check("owners", .pass, owner, evidence: evidence)
    }

    /// Whether the caller may open the control port, and which group may.
    func access() -> DoctorCheck {
        let port = modem.ports[0]
        var info = stat()
        guard stat(port.devicePath, &info) == 0 else {
            return check("access", .fail, "\(port.devicePath) is missing", remedy: "check that the modem is plugged in")
        }
        let group = HostProbes.groupName(info.st_gid)
        let mode = String(info.st_mode & 0o777, radix: 8)
        let evidence = ["\(port.devicePath): mode \(mode), uid \(info.st_uid), group \(group)"]
        guard Glibc.access(port.devicePath, R_OK | W_OK) == 0 else {
            return check(
                "access", .warn, "no read and write access to \(port.name)", evidence: evidence,
                remedy: "run cellpath with sudo, or add the user to the group '\(group)' "
                    + "(the cellpath udev rule: sudo make install-udev; docs/operations.md)")
        }
        return check("access", .pass, "\(port.name) can be opened", evidence: evidence)
    }

    /// What reading the modem gave: its error when it could not be read.
    func reading() -> DoctorCheck {
        guard let error = report.error else {
            return check(
                "read", .pass, "the modem answered", evidence: ["backend: \(status?.backend?.rawValue ?? "direct")"])
        }
        let evidence = ["\(error.layer.rawValue) error: \(error.message)"]
        if error.kind == .permission && !root {
            return check(
                "read", .warn, "couldn't read the modem without root", evidence: evidence,
                remedy: error.hint ?? "run cellpath doctor with sudo")
        }
        return check("read", .fail, "couldn't read the modem", evidence: evidence, remedy: error.hint)
    }

    /// Radio on; off with the model on ModemManager's FCC-unlock list is an FCC lock.
    func radio() -> DoctorCheck {
        let list = FCCUnlockList(directory: fccUnlockList)
        let id = FCCUnlockList.hardwareID(of: modem), entry = list.entry(for: modem, orVendor: false)
        var evidence = ["radio: \(status?.radio?.rawValue ?? "unknown")"]
        if let id {
            evidence.append(
                "\(id) \(entry != nil ? "is" : "is not") on ModemManager's FCC-unlock list (\(fccUnlockList))")
        }
        guard status?.radio == .off else { return check("radio", .pass, "the radio is on", evidence: evidence) }
        // Through ModemManager, off is a modem it has not enabled: no sign of a lock yet.
        if status?.backend == .modemManager {
            let unlock =
                entry.map {
                    "if ModemManager cannot, the model may be FCC-locked: "
                        + list.remedy(entry: $0, hardwareID: id, simulated: modem.isSimulated)
                } ?? "if it cannot, see ModemManager's log (journalctl -u ModemManager)"
            return check(
                "radio", .warn, "ModemManager has not enabled the modem (its radio is off)", evidence: evidence,
                remedy: "cellpath bearer up enables it (or mmcli -m any --enable); " + unlock)
        }
        if let entry, let id {
            return check(
                "radio", .fail, "the radio is off and \(id) is a model that ships FCC-locked",
                evidence: evidence,
                remedy: list.remedy(entry: entry, hardwareID: id, simulated: modem.isSimulated))
        }
        return check(
            "radio", .warn, "the radio is off", evidence: evidence,
            remedy: "cellpath bearer up turns it on; if the modem refuses, "
                + "it may be FCC-locked or in airplane mode "
                + "(rfkill list)")
    }

    /// The SIM's state and its (masked) ICCID.
    func sim() -> DoctorCheck {
        guard let sim = status?.sim else {
            return check(
                "sim", .warn, "the modem did not report its SIM",
                remedy:
                    "ask the modem yourself: \(modemTool(mbim: "--query-subscriber-ready-status", qmi: "--uim-get-card-status"))"
            )
        }
        var evidence = ["state: \(sim.state.rawValue)"]
        if let iccid = sim.iccid { evidence.append("ICCID: \(iccid)") }
        if let retries = sim.pinRetries { evidence.append("PIN retries: \(retries)") }
        switch sim.state {
        case .ready: return check("sim", .pass, "SIM ready", evidence: evidence)
        case .absent:
            return check(
                "sim", .fail, "no SIM", evidence: evidence,
                remedy: "insert a SIM; on a dual-SIM modem, check which slot is active")
        case .esimWithoutProfile:
            return check(
                "sim", .fail, sim.missingSIMDescription ?? "the eSIM has no enabled profile", evidence: evidence,
                remedy: sim.missingSIMRemedy)
        case .pinRequired:
            return check(
                "sim", .fail, "the SIM asks for its PIN", evidence: evidence,
                remedy: "cellpath bearer up --pin-file FILE enters it")
        case .pukRequired:
            return check(
                "sim", .fail, "the SIM is PUK-locked", evidence: evidence,
                remedy: "unblock it with its PUK (mmcli --puk, or in a phone)")
        case .notReady:
            return check(
                "sim", .warn, "the SIM is not ready yet", evidence: evidence,
                remedy: "wait a few seconds and run it again")
        case .failed:
            return check(
                "sim", .fail, "the SIM failed", evidence: evidence,
                remedy: "reseat the SIM; an eSIM needs an enabled profile")
        }
    }

    /// A modem with several SIM slots: each slot's state and which is active; a warning with the
    /// `--sim-slot` remedy when the active slot is empty or holds an eSIM without a profile.
    func simSlots() -> DoctorCheck? {
        guard let sim = status?.sim, sim.slots.count > 1 else { return nil }
        let evidence = sim.slots.map {
            "slot \($0.number): \(Self.slotState($0.content))\($0.active ? " (active)" : "")"
        }
        guard let active = sim.activeSlot else {
            return check(
                "sim_slots", .warn, "\(sim.slots.count) SIM slots, none reported active", evidence: evidence,
                remedy:
                    "ask the modem yourself: \(modemTool(mbim: "--ms-query-device-slot-mappings", qmi: "--uim-get-slot-status"))"
            )
        }
        let usable = sim.slots.filter { $0.content == .sim || $0.content == .esim }
        if usable.contains(active) {
            return check(
                "sim_slots", .pass, "slot \(active.number) of \(sim.slots.count) is active and holds a SIM",
                evidence: evidence)
        }
        let problem =
            active.content == .esimWithoutProfile
            ? "the active slot \(active.number) holds an eSIM without an enabled profile"
            : "the active slot \(active.number) is \(Self.slotState(active.content))"
        let remedy =
            usable.first.map { "use slot \($0.number), which holds a SIM: cellpath bearer up --sim-slot \($0.number)" }
            ?? "insert a SIM, or enable an eSIM profile (lpac)"
        return check("sim_slots", .warn, problem, evidence: evidence, remedy: remedy)
    }

    /// A slot's state in a doctor finding: `ready`, `empty`, `eSIM without an enabled profile`, `unusable`.
    private static func slotState(_ content: SIMSlot.Content) -> String {
        switch content {
        case .sim, .esim: "ready"
        case .empty: "empty"
        case .esimWithoutProfile: "eSIM without an enabled profile"
        case .unusable: "unusable"
        }
    }

    /// Registration and signal.
    func registration() -> DoctorCheck {
        guard let registration = status?.registration else {
            return check(
                "registration", .warn, "the modem did not report its registration",
                remedy:
                    "ask the modem yourself: \(modemTool(mbim: "--query-registration-state", qmi: "--nas-get-serving-system"))"
            )
        }
        var evidence = ["state: \(registration.state.rawValue)"]
        if let network = registration.servingOperator ?? status?.homeOperator {
            evidence.append("operator: \([network.name, network.id].compactMap { $0 }.joined(separator: " "))")
        }
        if let technology = registration.accessTechnology { evidence.append("technology: \(technology.rawValue)") }
        if let rssi = status?.signal?.rssiDbm { evidence.append("RSSI: \(rssi) dBm") }
        if let error = registration.networkError { evidence.append("network error: \(error)") }
        switch registration.state {
        case .home, .roaming:
            if let rssi = status?.signal?.rssiDbm, rssi < -105 {
                return check(
                    "registration", .warn, "registered, with a weak signal", evidence: evidence,
                    remedy: "move the machine or its antennas")
            }
            return check("registration", .pass, "registered (\(registration.state.rawValue))", evidence: evidence)
        case .denied:
            return check(
                "registration", .fail, "registration denied", evidence: evidence,
                remedy: "check the SIM's subscription with its operator")
        case .searching, .notRegistered, .unknown:
            return check(
                "registration", .warn, "not registered", evidence: evidence,
                remedy: "check coverage and antennas; cellpath bearer up waits for registration")
        }
    }

    /// The libmbim or libqmi command line that asks the modem, through the proxy, what `mbim` or `qmi` asks.
    private func modemTool(mbim: String, qmi: String) -> String {
        let mbimModem = modem.protocol == .mbim
        return "\(mbimModem ? "mbimcli" : "qmicli") -p -d \(modem.ports[0].devicePath) \(mbimModem ? mbim : qmi)"
    }

    /// QMI: the kernel's raw_ip setting. The modem's own format (WDA) is not read by the modem
    /// layer: the check warns that it could not compare them.
    func dataFormat() -> DoctorCheck? {
        guard modem.protocol == .qmi, let interface = modem.interfaces.first else { return nil }
        let path = "\(roots.sysfs)/class/net/\(interface)/qmi/raw_ip"
        guard let value = FileSystem.readText(path)?.filter({ !$0.isWhitespace }) else {
            return check("data_format", .skip, "\(interface) has no qmi/raw_ip (not a qmi_wwan device)")
        }
        let evidence = ["\(path): \(value)", "the modem's link-layer format (WDA) was not read"]
        let remedy =
            "compare with qmicli -p -d \(modem.ports[0].devicePath) --wda-get-data-format; "
            + "they must agree (raw-ip: raw_ip Y)"
        if value == "Y" {
            return check(
                "data_format", .warn,
                "\(interface) expects raw IP, as modern modems send; the modem's own format was not checked",
                evidence: evidence, remedy: remedy)
        }
        return check(
            "data_format", .warn, "\(interface) expects 802.3 frames: most modems send raw IP",
            evidence: evidence, remedy: remedy)
    }
}
