import CellpathCore
import CommandLineKit
import ModemDiscovery

/// The output of the modem commands: one record per modem (docs/json.md, `cellpath modems`),
/// and a table for people. Personal data is masked unless `disclosure` is `.full`.
package enum ModemListing {
    /// `cellpath modems`: `{"modems": [...]}` in discovery order, the modems cellpath cannot drive
    /// (`uncontrolled`) among them, shown as a table with a note for each of those and for each
    /// modem with a note of its own.
    package static func list(
        _ reports: [ModemReport], _ disclosure: Disclosure, roots: DeviceRoots,
        uncontrolled: [UncontrolledModem] = []
    ) -> Output {
        let entries =
            reports.map { ($0.modem.index, Value.record(Self.record($0, disclosure))) }
            + uncontrolled.map { ($0.index, Value.record(Self.record($0))) }
        var record = Record()
        record.add("modems", .list(entries.sorted { $0.0 < $1.0 }.map { $0.1 }))
        let notes =
            reports.isEmpty && uncontrolled.isEmpty
            ? [noModem(roots).message]
            : (reports.compactMap { report in report.note.map { (report.modem.index, $0) } }
                + uncontrolled.map { ($0.index, $0.reason) }).sorted { $0.0 < $1.0 }.map { "modem \($0.0): \($0.1)" }
        let empty = reports.isEmpty && uncontrolled.isEmpty
        return Output(record, notes: notes, humanLines: empty ? [] : table(reports, uncontrolled))
    }

    /// A modem cellpath cannot drive, named where a command needs one: exit 69 with the reason.
    package static func cannotDrive(_ modem: UncontrolledModem) -> CellpathError {
        let hint =
            switch modem.kind {
            case .unsupported: "cellpath modems lists the modems cellpath can use"
            case .router:
                "give the modem's DNS server (its DHCP lease names it, often the router's own address) with --dns"
            }
        return CellpathError(.unavailable, "modem \(modem.index): \(modem.reason)", hint: hint)
    }

    /// `cellpath modems show`: the modem's record, with its error as the output's failure.
    package static func show(_ report: ModemReport, _ disclosure: Disclosure) -> CommandOutcome {
        var record = self.record(report, disclosure)
        let title =
            "modem \(report.modem.index): \(report.status?.model ?? report.modem.model ?? "modem") (\(report.modem.protocol.rawValue.uppercased()), \(report.modem.ports[0].name))"
        guard let error = report.error else { return CommandOutcome(Output(title: title, record)) }
        // The JSON error object of a failed command comes first, with these details.
        record.fields.removeAll { $0.key == "error" }
        var details = Record()
        details.add("layer", .string(error.layer.rawValue))
        details.add("status", .optional(error.status))
        return CommandOutcome(
            Output(title: title, record), failure: CommandFailure(error.cellpathError, details: details))
    }

    /// No modem was found: exit 69, with where discovery looked.
    static func noModem(_ roots: DeviceRoots) -> CellpathError {
        CellpathError(
            .unavailable,
            "no modem found (looked for MBIM and QMI ports in \(roots.sysfs)/class/usbmisc and \(roots.sysfs)/class/wwan)",
            hint: "check that the modem is plugged in and its driver (cdc_mbim, qmi_wwan, mhi_wwan) is loaded; "
                + "in the simulated world, run it with cellpath sim exec")
    }

    /// Every field of one modem: discovery first, then what the modem reported, then its error.
    package static func record(_ report: ModemReport, _ disclosure: Disclosure) -> Record {
        let modem = report.modem
        let status = report.status?.redacted(disclosure)
        var record = Record()
        record.add("index", .int(modem.index))
        record.add("supported", .bool(true))
        record.add("mode", .string("modem"))
        record.add("protocol", .string(modem.protocol.rawValue))
        record.add("port", .string(modem.ports[0].name))
        record.add("backend", .optional(report.status?.backend?.rawValue))
        record.add("ports", .list(modem.ports.map { .string($0.name) }))
        record.add("device", .string(modem.ports[0].devicePath))
        record.add("interface", .optional(modem.interfaces.first))
        record.add("links", .list(modem.links.map(Value.string)))
        record.add(
            "usb", modem.usbVendorID.map { hardwareIDs($0, modem.usbProductID, "product_id") } ?? .null,
            label: "USB")
        record.add(
            "pci", modem.pciVendorID.map { hardwareIDs($0, modem.pciDeviceID, "device_id") } ?? .null,
            label: "PCI")
        record.add("manufacturer", .optional(status?.manufacturer ?? modem.manufacturer))
        record.add("model", .optional(status?.model ?? modem.model))
        record.add("driver", .null)
        record.add("firmware", .optional(status?.firmware))
        record.add("imei", .optional(status?.imei), label: "IMEI")
        record.add("radio", .optional(radio(report)))
        record.add(
            "sim",
            status?.sim.map { sim in
                var fields = Record()
                fields.add("state", .string(sim.state.rawValue))
                fields.add("problem", .optional(sim.missingSIMDescription))
                fields.add("iccid", .optional(sim.iccid), label: "ICCID")
                fields.add("imsi", .optional(sim.imsi), label: "IMSI")
                fields.add("msisdns", .list(sim.msisdns.map(Value.string)), label: "MSISDNs")
                fields.add("pin_retries", sim.pinRetries.map(Value.int) ?? .null, label: "PIN retries")
                fields.add("slots", .list(sim.slots.map(slotValue)))
                return .record(fields)
            } ?? .null, label: "SIM")
        record.add("home_operator", status?.homeOperator.map(operatorValue) ?? .null)
        record.add(
            "registration",
            status?.registration.map { registration in
                var fields = Record()
                fields.add("state", .string(registration.state.rawValue))
                fields.add("operator", registration.servingOperator.map(operatorValue) ?? .null)
                fields.add("access_technology", .optional(registration.accessTechnology?.rawValue))
                fields.add("network_error", .optional(registration.networkError))
                return .record(fields)
            } ?? .null)
        record.add(
            "signal",
            status?.signal.map { signal in
                var fields = Record()
                fields.add("rssi_dbm", signal.rssiDbm.map(Value.int) ?? .null, label: "RSSI (dBm)")
                fields.add("rsrp_dbm", signal.rsrpDbm.map(Value.int) ?? .null, label: "RSRP (dBm)")
                fields.add("rsrq_db", signal.rsrqDb.map(Value.int) ?? .null, label: "RSRQ (dB)")
                fields.add("snr_db", signal.snrDb.map(Value.double) ?? .null, label: "SNR (dB)")
                return .record(fields)
            } ?? .null)
        record.add("packet_service", .optional(status?.packetService?.rawValue))
        record.add(
            "bearer",
            status?.bearer.map { bearer in
                var fields = Record()
                fields.add("state", .string(bearer.state.rawValue))
                fields.add("apn", .optional(bearer.apn), label: "APN")
                fields.add("ipv4_address", .optional(bearer.ipv4Address), label: "IPv4 address")
                fields.add("prefix_length", bearer.prefixLength.map(Value.int) ?? .null)
                fields.add("gateway", .optional(bearer.gateway))
                fields.add("ipv6_address", .optional(bearer.ipv6Address), label: "IPv6 address")
                fields.add(
                    "ipv6_prefix_length", bearer.ipv6PrefixLength.map(Value.int) ?? .null, label: "IPv6 prefix length")
                fields.add("ipv6_gateway", .optional(bearer.ipv6Gateway), label: "IPv6 gateway")
                fields.add("dns_servers", .list(bearer.dnsServers.map(Value.string)), label: "DNS servers")
                fields.add("mtu", bearer.mtu.map(Value.int) ?? .null, label: "MTU")
                return .record(fields)
            } ?? .null)
        record.add("reason", .null)
        record.add("note", .optional(report.note))
        record.add(
            "error",
            report.error.map { error in
                var fields = Record()
                fields.add("kind", .string(error.kind.rawValue))
                fields.add("layer", .string(error.layer.rawValue))
                fields.add("status", .optional(error.status))
                fields.add("message", .string(error.message))
                fields.add("hint", .optional(error.hint))
                fields.add("exit_code", .int(Int(ExitCode.forKind(error.kind).rawValue)))
                return .record(fields)
            } ?? .null)
        return record
    }

    /// A modem cellpath cannot drive, with the fields of a driven one (what only the modem can
    /// report is null): `supported` false and its `reason` (unsupported), or `mode` `router` and
    /// its `note` (router mode).
    package static func record(_ modem: UncontrolledModem) -> Record {
        var record = Record()
        record.add("index", .int(modem.index))
        record.add("supported", .bool(modem.kind == .router))
        record.add("mode", .string(modem.kind == .router ? "router" : "modem"))
        for key in ["protocol", "port", "backend"] { record.add(key, .null) }
        record.add("ports", .list(modem.ports.map(Value.string)))
        record.add("device", .null)
        record.add("interface", .optional(modem.interfaces.first))
        record.add("links", .list([]))
        let ids = hardwareIDs(modem.vendorID, modem.productID, modem.bus == .usb ? "product_id" : "device_id")
        record.add("usb", modem.bus == .usb ? ids : .null, label: "USB")
        record.add("pci", modem.bus == .pci ? ids : .null, label: "PCI")
        record.add("manufacturer", .optional(modem.manufacturer))
        record.add("model", .optional(modem.model))
        record.add("driver", .optional(modem.driver))
        for key in [
            "firmware", "imei", "radio", "sim", "home_operator", "registration", "signal", "packet_service",
            "bearer"
        ] { record.add(key, .null) }
        record.add("reason", modem.kind == .unsupported ? .string(modem.reason) : .null)
        record.add("note", modem.kind == .router ? .string(modem.reason) : .null)
        record.add("error", .null)
        return record
    }

    /// The radio state shown for an FCC-locked modem: the modem says its radio is off and its
    /// model (`vid:pid`) is on ModemManager's FCC-unlock list.
    static let fccLocked = "fcc-locked"

    /// The modem's radio state: `on`, `off` or `fcc-locked`. Only the modem itself tells a radio
    /// that is off (the direct backends): through ModemManager, `off` is a modem that ModemManager
    /// has not enabled (its state `disabled`, until NetworkManager or `mmcli --enable` asks),
    /// which says nothing of a lock.
    static func radio(_ report: ModemReport, list: FCCUnlockList = FCCUnlockList()) -> String? {
        guard let radio = report.status?.radio else { return nil }
        guard radio == .off, report.status?.backend != .modemManager else { return radio.rawValue }
        return list.entry(for: report.modem, orVendor: false) != nil ? fccLocked : radio.rawValue
    }

    private static func hardwareIDs(_ vendor: String, _ product: String?, _ productKey: String) -> Value {
        var ids = Record()
        ids.add("vendor_id", .string(vendor))
        ids.add(productKey, .optional(product))
        return .record(ids)
    }

    /// A SIM slot: its number (from 1), what it holds, and whether it is the active one.
    private static func slotValue(_ slot: SIMSlot) -> Value {
        var fields = Record()
        fields.add("slot", .int(slot.number))
        fields.add("content", .string(slot.content.rawValue))
        fields.add("active", .bool(slot.active))
        return .record(fields)
    }

    private static func operatorValue(_ network: NetworkOperator) -> Value {
        var fields = Record()
        fields.add("id", .optional(network.id), label: "MCC-MNC")
        fields.add("name", .optional(network.name))
        return .record(fields)
    }

    /// One row per modem: what tells modems apart and whether each can carry a check; a modem
    /// cellpath cannot drive says why in short (its note below the table says it in full).
    static func table(_ reports: [ModemReport], _ uncontrolled: [UncontrolledModem] = []) -> [String] {
        let withErrors = reports.contains { $0.error != nil } || !uncontrolled.isEmpty
        var rows: [(Int, Value)] = reports.map { report in
            let modem = report.modem, status = report.status
            var row = Record()
            row.add("modem", .int(modem.index))
            row.add("protocol", .string(modem.protocol.rawValue.uppercased()))
            row.add("port", .string(modem.ports[0].name))
            row.add("backend", .optional(status?.backend?.rawValue))
            row.add("interface", .optional(modem.interfaces.first))
            row.add("model", .optional(status?.model ?? modem.model))
            row.add(
                "sim", .optional(status?.sim.map { $0.missingSIMDescription ?? $0.state.rawValue }), label: "SIM")
            let network = status?.registration?.servingOperator ?? status?.homeOperator
            row.add("operator", .optional(network.flatMap { $0.name ?? $0.id }))
            // An FCC lock is why such a modem is not registered: the column says so.
            let locked = radio(report) == Self.fccLocked
            row.add("registration", .optional(locked ? Self.fccLocked : status?.registration?.state.rawValue))
            row.add("technology", .optional(status?.registration?.accessTechnology?.rawValue))
            row.add("signal", .optional(status?.signal?.rssiDbm.map { "\($0) dBm" }))
            row.add("bearer", .optional(status?.bearer?.state.rawValue))
            row.add("address", .optional(status?.bearer?.ipv4Address))
            if withErrors { row.add("error", .optional(report.error?.message)) }
            return (modem.index, .record(row))
        }
        rows += uncontrolled.map { modem in
            var row = Record()
            row.add("modem", .int(modem.index))
            for key in ["protocol", "port", "backend"] { row.add(key, .null) }
            row.add("interface", .optional(modem.interfaces.first))
            row.add("model", .optional(modem.model))
            for key in ["sim", "operator", "registration", "technology", "signal", "bearer", "address"] {
                row.add(key, .null, label: key == "sim" ? "SIM" : nil)
            }
            row.add(
                "error",
                .string(
                    modem.kind == .router
                        ? "router mode: no modem state (note below)"
                        : "unsupported (note below)"))
            return (modem.index, .record(row))
        }
        var record = Record()
        record.add("modems", .list(rows.sorted { $0.0 < $1.0 }.map { $0.1 }))
        return Renderer(json: false, color: false).render(Output(record)).split(separator: "\n").dropFirst().map {
            String($0.dropFirst(2))
        }
    }
}
