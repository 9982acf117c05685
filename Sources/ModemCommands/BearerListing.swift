import Bearers
import CellpathCore
import CommandLineKit
import ModemDiscovery
import SystemSupport

/// A modem's bearer as the bearer commands print it (docs/json.md, `cellpath bearer`).
package struct BearerReport: Sendable, Equatable {
    package var modem: DiscoveredModem
    package var state: BearerState
    /// Who served the command: `mbim`, `qmi` or `modemmanager`.
    package var backend: String?
    /// The interface the bearer's packets flow on: the modem's net device, or the QMAP mux
    /// device cellpath added over it (the bearer's record says).
    package var interface: String?
    package var apn: String?
    package var address: String?
    package var gateway: String?
    /// The IPv6 address (with its prefix length) and gateway.
    package var ipv6Address: String?
    package var ipv6PrefixLength: Int?
    package var ipv6Gateway: String?
    package var dnsServers: [String] = []
    package var mtu: Int?
    package var servingOperator: NetworkOperator?
    package var registration: RegistrationState?
    /// True when cellpath connected the bearer, false when another program did; nil when
    /// cellpath has no record of it.
    package var broughtUpByCellpath: Bool?
    /// `bearer up`: whether the bearer was connected before this run.
    package var reused: Bool?
    /// When cellpath connected the bearer or first found it (seconds since 1970).
    package var since: Double?
    package var bytesReceived: UInt64?
    package var bytesSent: UInt64?

    package init(modem: DiscoveredModem, state: BearerState) {
        self.modem = modem
        self.state = state
        interface = modem.interfaces.first
    }
}

/// The records of the bearer commands, and the lines people read.
package enum BearerListing {
    /// `bearer up` and `bearer status`: the bearer's fields.
    package static func output(_ report: BearerReport, title: String? = nil, now: Double = WallClock.now) -> Output {
        Output(title: title ?? self.title(report), record(report, now: now))
    }

    /// `modem 0: bearer connected on wwan0 (100.64.23.10)`.
    static func title(_ report: BearerReport) -> String {
        let interface = report.interface ?? "no interface"
        let addresses = [report.address, report.ipv6Address].compactMap { $0 }
        let address = addresses.isEmpty ? "" : " (\(addresses.joined(separator: ", ")))"
        return "modem \(report.modem.index): bearer \(report.state.rawValue) on \(interface)\(address)"
    }

    package static func record(_ report: BearerReport, now: Double = WallClock.now) -> Record {
        var record = Record()
        record.add("modem", .int(report.modem.index))
        record.add("protocol", .string(report.modem.protocol.rawValue))
        record.add("port", .string(report.modem.ports[0].name))
        record.add("backend", .optional(report.backend))
        record.add("interface", .optional(report.interface))
        record.add("state", .string(report.state.rawValue))
        record.add("apn", .optional(report.apn), label: "APN")
        record.add("ipv4_address", .optional(report.address), label: "IPv4 address")
        record.add("gateway", .optional(report.gateway))
        record.add("ipv6_address", .optional(report.ipv6Address), label: "IPv6 address")
        record.add("ipv6_prefix_length", report.ipv6PrefixLength.map(Value.int) ?? .null, label: "IPv6 prefix length")
        record.add("ipv6_gateway", .optional(report.ipv6Gateway), label: "IPv6 gateway")
        record.add("dns_servers", .list(report.dnsServers.map(Value.string)), label: "DNS servers")
        record.add("mtu", report.mtu.map(Value.int) ?? .null, label: "MTU")
        record.add(
            "operator",
            report.servingOperator.map { network in
                var fields = Record()
                fields.add("id", .optional(network.id), label: "MCC-MNC")
                fields.add("name", .optional(network.name))
                return .record(fields)
            } ?? .null)
        record.add("registration", .optional(report.registration?.rawValue))
        record.add("brought_up_by", .optional(report.broughtUpByCellpath.map { $0 ? "cellpath" : "another program" }))
        if let reused = report.reused { record.add("reused", .bool(reused)) }
        record.add("connected_since", report.since.map { .time(($0 * 1000).rounded() / 1000) } ?? .null)
        record.add("uptime_s", report.since.map { .int(max(0, Int(now - $0))) } ?? .null, label: "uptime (s)")
        record.add("bytes_received", report.bytesReceived.map { .int(Int(clamping: $0)) } ?? .null)
        record.add("bytes_sent", report.bytesSent.map { .int(Int(clamping: $0)) } ?? .null)
        return record
    }

    /// `bearer status --watch`: one line per status, JSON (JSON Lines) or the human title.
    package static func watchLine(_ report: BearerReport, json: Bool, now: Double = WallClock.now) -> String {
        guard json else { return title(report).terminalSafe + "\n" }
        return JSONWriter.line(.record(record(report, now: now)))
    }

    /// The JSON value of `bearer` after `bearer down`. A bearer left for other users
    /// (`leftForOthers`, which only a user's release gives) reads as one left connected.
    static func name(_ bearer: BearerTeardown.Result) -> String {
        switch bearer {
        case .disconnected: "disconnected"
        case .leftConnected, .leftForOthers: "left-connected"
        case .alreadyDown: "already-down"
        case .inUse: "in-use"
        }
    }

    /// `bearer down`: what was done.
    package static func down(
        _ modem: DiscoveredModem, _ teardown: BearerTeardown.Result, removedConfiguration: Bool,
        backend: String?
    ) -> Output {
        var record = Record()
        record.add("modem", .int(modem.index))
        record.add("backend", .optional(backend))
        record.add("interface", .optional(modem.interfaces.first))
        record.add("bearer", .string(name(teardown)))
        record.add("configuration_removed", .bool(removedConfiguration))
        if case .inUse(let pids) = teardown { record.add("used_by", .list(pids.map { .int(Int($0)) })) }
        let what =
            switch teardown {
            case .disconnected: "bearer disconnected"
            case .leftConnected, .leftForOthers:
                "bearer left connected (another program brought it up; --force disconnects it)"
            case .alreadyDown: "bearer already down"
            case .inUse(let pids):
                "bearer in use by cellpath process\(pids.count == 1 ? "" : "es") \(pids.map(String.init).joined(separator: ", ")): the last of them takes it down (--force now)"
            }
        let configuration =
            removedConfiguration
            ? ", cellpath's configuration of \(modem.interfaces.first ?? "the interface") removed" : ""
        return Output(title: "modem \(modem.index): \(what)\(configuration)", record)
    }
}
