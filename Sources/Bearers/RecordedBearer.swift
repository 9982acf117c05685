import CellpathCore
import IPConfiguration
import ModemDiscovery

/// A bearer that cellpath connected and recorded as up, taken as a check's path without asking
/// the modem first: the record holds what the path needs (addresses, DNS servers, serving
/// network), and the kernel must hold the record's configuration (the interface up with the
/// record's addresses, the source rule and the default route of its table). The modem is asked
/// beside the check instead (`ModemPathProvider.confirmPath`); a record that is stale can only
/// fail the check, since every socket of the chain is bound to the bearer's interface.
struct RecordedBearer: Sendable {
    var record: BearerRecord
    var applied: AppliedAddressing
    var path: CellularPath

    /// The path `record` describes for `settings`, when the record is complete, matches what is
    /// asked (the APN, at least one family wanted), and the kernel agrees; nil otherwise.
    init?(_ record: BearerRecord, settings: BearerSettings) {
        guard record.connectedByCellpath, let applied = record.addressing, let dns = record.dnsServers,
            settings.apn == nil || settings.apn == record.apn, applied.addressing.interface == record.interface
        else { return nil }
        let wanted = settings.ipType
        let ipv4 = wanted.includesIPv4 ? applied.addressing.address : nil
        let ipv6 = wanted.includesIPv6 ? applied.addressing.ipv6 : nil
        guard ipv4 != nil || ipv6 != nil, Self.kernelHolds(applied, ipv4: ipv4, ipv6: ipv6?.address) else {
            return nil
        }
        self.record = record
        self.applied = applied
        path = CellularPath(
            interfaceName: record.interface, ipv4Address: ipv4, ipv6Address: ipv6?.address,
            dnsServers: dns.filter { $0.contains(":") ? ipv6 != nil : ipv4 != nil }, mtu: applied.addressing.mtu,
            operatorID: record.servingNetwork, modemBackend: record.backend,
            ipv6PrefixLength: ipv6?.prefixLength, ipv6Gateway: ipv6?.gateway)
    }

    /// Whether the kernel holds `applied` on its interface for the families used: the interface
    /// up in the table the record names, each address on it with its source rule, and the
    /// table's default route of its family.
    private static func kernelHolds(_ applied: AppliedAddressing, ipv4: String?, ipv6: String?) -> Bool {
        guard let kernel = try? InterfaceInspection.read(applied.addressing.interface), kernel.exists, kernel.isUp,
            kernel.table == applied.table
        else { return false }
        let held = Set(kernel.addresses.map(\.address)), rules = Set(kernel.ruleSources)
        if let ipv4, !held.contains(ipv4) || !rules.contains(ipv4) || !kernel.tableDefaultRoute.ipv4 { return false }
        if let ipv6, !held.contains(ipv6) || !rules.contains(ipv6) || !kernel.tableDefaultRoute.ipv6 { return false }
        return true
    }

    /// Why the modem's view of the bearer (`bearer`, read beside the check) says the path is
    /// not the record's; nil when the modem has it connected with the record's addresses.
    func disagreement(with bearer: BearerStatus) -> String? {
        guard bearer.state == .connected else { return "the modem reports it \(bearer.state.rawValue)" }
        if let ipv4 = path.ipv4Address, let now = bearer.ipv4Address, now != ipv4 {
            return "the modem reports it re-addressed"
        }
        return nil
    }
}
