import CellpathCore
import Glibc
import IPConfiguration
import ModemDiscovery
import Modems
import SystemSupport

extension BearerRecord {
    /// The modem came back under other names (it reset or re-enumerated): the record takes its
    /// control port, and its interface when the recorded one is gone.
    mutating func followRename(of modem: DiscoveredModem) {
        controlPort = modem.ports[0].devicePath
        let gone =
            InterfaceConfigurator.isValidInterfaceName(interface) && !modem.interfaces.contains(interface)
            && if_nametoindex(interface) == 0
        if gone, let current = modem.interfaces.first { interface = current }
    }

    /// Why the record is not one cellpath could have written for `modem`, nil when it is: the
    /// same physical device (when it names one), control port and protocol, one of the modem's
    /// own interfaces (a name the kernel allows) or, for a QMAP bearer or ModemManager's, one of
    /// its data links (a mux device, the link ModemManager multiplexes the bearer on), and
    /// addressing within what cellpath applies (its table range, unicast addresses of their
    /// family, the kernel settings' values cellpath changes). A forged record must not steer
    /// what root undoes.
    func problem(for modem: DiscoveredModem) -> String? {
        if let device, device != modem.devicePath { return "it names another device" }
        guard controlPort == modem.ports[0].devicePath else { return "it names another control port" }
        guard `protocol` == modem.protocol.rawValue else {
            return "it names another protocol (\(`protocol`.prefix(16)))"
        }
        guard InterfaceConfigurator.isValidInterfaceName(interface) else {
            return "its interface is not an interface name"
        }
        let onLink = qmapMuxID != nil || backend == ModemBackendName.modemManager.rawValue
        guard modem.interfaces.contains(interface) || (onLink && modem.links.contains(interface)) else {
            return "its interface \(interface) is not modem \(modem.index)'s"
        }
        if let qmapMuxID, !(1 ... 254).contains(qmapMuxID) { return "its QMAP mux id is out of range" }
        if let imei, !Self.isIMEI(imei) { return "its IMEI is not an IMEI" }
        if let apn, apn.utf8.count > 100 || apn.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
        {
            return "its APN is not an APN"
        }
        if let handle, let problem = Self.problem(handle) { return problem }
        if let addressing, let problem = Self.problem(addressing, interface: interface) { return problem }
        if users.contains(where: { $0.pid <= 0 }) { return "it names an impossible process" }
        if let dnsServers,
            dnsServers.count > 8
                || dnsServers.contains(where: { IPAddress.ipv4Bytes($0) == nil && IPAddress.ipv6Bytes($0) == nil })
        {
            return "its DNS servers are not addresses"
        }
        if let servingNetwork, NetworkOperator.plmnID(servingNetwork.filter { $0 != "-" }) != servingNetwork {
            return "its serving network is not an MCC-MNC"
        }
        if let backend, ModemBackendName(rawValue: backend) == nil {
            return "its backend is not one of cellpath's"
        }
        return nil
    }

    /// An IMEI as modems report it: 14 to 16 ASCII digits (IMEI, IMEISV).
    public static func isIMEI(_ text: String) -> Bool {
        (14 ... 16).contains(text.utf8.count)
            && text.utf8.allSatisfy { (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) }
    }

    private static func problem(_ handle: BearerHandle) -> String? {
        let clients = [handle.clientID, handle.ipv6ClientID].compactMap { $0 }
        if clients.contains(where: { !(1 ... 255).contains($0) }) { return "its QMI client ID is out of range" }
        if let session = handle.sessionID, !(0 ... 255).contains(session) {
            return "its MBIM session ID is out of range"
        }
        if let path = handle.bearerPath, !path.hasPrefix("/org/freedesktop/ModemManager1/Bearer/") {
            return "its ModemManager bearer is not a bearer object"
        }
        if let name = handle.dataInterface, !InterfaceConfigurator.isValidInterfaceName(name) {
            return "its ModemManager bearer's interface is not an interface name"
        }
        return nil
    }

    private static func problem(_ applied: AppliedAddressing, interface: String) -> String? {
        // The addressing may name the interface the modem had before it came back renamed, now gone.
        let previousInterfaceGone =
            InterfaceConfigurator.isValidInterfaceName(applied.addressing.interface)
            && if_nametoindex(applied.addressing.interface) == 0
        guard applied.addressing.interface == interface || previousInterfaceGone else {
            return "its addressing names another interface"
        }
        guard InterfaceConfigurator.tables.contains(applied.table) else {
            return "its routing table \(applied.table) is not one of cellpath's"
        }
        if let address = applied.addressing.address {
            guard let bytes = IPAddress.ipv4Bytes(address), BearerIPConfigurationCheck.nonBearerKind(bytes) == nil
            else { return "its IPv4 address is not a unicast address" }
        }
        if let ipv6 = applied.addressing.ipv6 {
            guard let bytes = IPAddress.ipv6Bytes(ipv6.address), BearerIPConfigurationCheck.nonBearerKind(bytes) == nil
            else { return "its IPv6 address is not a unicast address" }
            guard (1 ... 128).contains(ipv6.prefixLength) else { return "its IPv6 prefix length is out of range" }
            if let gateway = ipv6.gateway, IPAddress.ipv6Bytes(gateway) == nil {
                return "its IPv6 gateway is not an IPv6 address"
            }
        }
        if let mtu = applied.previousMTU, !(68 ... 65535).contains(mtu) { return "its previous MTU is out of range" }
        if let mtu = applied.addressing.mtu, !(68 ... 65535).contains(mtu) { return "its MTU is out of range" }
        for metric in [applied.addedMainRouteMetric, applied.addedIPv6MainRouteMetric].compactMap({ $0 })
        where metric < InterfaceConfigurator.minimumMetric || metric > Int(Int32.max) {
            return "its route metric \(metric) is not one cellpath adds"
        }
        // cellpath changes rp_filter only from strict (1), and disable_ipv6 only from 1.
        if let previous = applied.previousRPFilter, previous != "1" {
            return "its previous rp_filter is not one cellpath changes"
        }
        if let previous = applied.previousDisableIPv6, previous != "1" {
            return "its previous disable_ipv6 is not one cellpath changes"
        }
        return nil
    }
}
