import CellpathCore
import Glibc

/// What the kernel says about a network interface right now (read with getifaddrs).
struct InterfaceState {
    var exists: Bool
    var isUp: Bool
    var addresses: [String]

    /// Reads the current state of interface `name`.
    static func read(_ name: String) -> InterfaceState {
        let exists = if_nametoindex(name) != 0
        var isUp = false
        var addresses: [String] = []
        var list: UnsafeMutablePointer<ifaddrs>?
        if getifaddrs(&list) == 0 {
            var p = list
            while let entry = p {
                if String(cString: entry.pointee.ifa_name) == name {
                    if entry.pointee.ifa_flags & UInt32(IFF_UP) != 0 { isUp = true }
                    if let sa = entry.pointee.ifa_addr, let text = numericHost(sa) { addresses.append(text) }
                }
                p = entry.pointee.ifa_next
            }
            freeifaddrs(list)
        }
        return InterfaceState(exists: exists, isUp: isUp, addresses: addresses)
    }
}

extension CellularPath {
    /// The bearer addresses the chain binds to for `ipType`.
    func bindAddresses(for ipType: IPType) -> (ipv4: String?, ipv6: String?) {
        switch ipType {
        case .ipv4: return (ipv4Address, nil)
        case .ipv6: return (nil, ipv6Address)
        case .any: return (ipv4Address, ipv6Address)
        }
    }

    /// Throws unless the interface exists, is up and still holds every address used for `ipType`.
    func verify(for ipType: IPType, hop: Int?) throws(FetchFailure) {
        let (v4, v6) = bindAddresses(for: ipType)
        if v4 == nil && v6 == nil {
            throw FetchFailure(.noAddress, "the cellular path on \(interfaceName) has no \(ipType == .ipv6 ? "IPv6" : ipType == .ipv4 ? "IPv4" : "IP") address",
                               hint: "connect the bearer first", hop: hop)
        }
        let state = InterfaceState.read(interfaceName)
        guard state.exists else {
            throw FetchFailure(.noSuchInterface, "interface \(interfaceName) does not exist", hint: "is the modem connected?", hop: hop)
        }
        guard state.isUp else { throw FetchFailure(.interfaceDown, "interface \(interfaceName) is down", hop: hop) }
        for address in [v4, v6].compactMap({ $0 }) where !state.addresses.contains(address) {
            throw FetchFailure(.addressGone, "the bearer address \(address) is no longer on \(interfaceName)",
                               hint: "the bearer was disconnected or re-addressed", hop: hop)
        }
    }
}
