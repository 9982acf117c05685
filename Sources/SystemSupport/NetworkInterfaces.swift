import Glibc

/// What the kernel says about a network interface right now (read with getifaddrs: no
/// privilege needed; the network namespace of the calling thread).
public struct InterfaceSnapshot: Sendable, Equatable {
    public var exists: Bool
    public var isUp: Bool
    /// The link below is there (IFF_RUNNING): a modem's carrier, a veth's peer, a TUN's reader.
    public var hasCarrier: Bool
    /// Its IPv4 and IPv6 addresses, numeric.
    public var addresses: [String]

    /// Reads the current state of interface `name`.
    public static func read(_ name: String) -> InterfaceSnapshot {
        var snapshot = InterfaceSnapshot(exists: if_nametoindex(name) != 0, isUp: false, hasCarrier: false, addresses: [])
        forEachAddress { interface, flags, address in
            guard interface == name else { return }
            if flags & UInt32(IFF_UP) != 0 { snapshot.isUp = true }
            if flags & UInt32(IFF_RUNNING) != 0 { snapshot.hasCarrier = true }
            if let address { snapshot.addresses.append(address) }
        }
        return snapshot
    }

    /// Every IPv4 and IPv6 address on the device's interfaces, numeric.
    public static func deviceAddresses() -> [String] {
        var addresses: [String] = []
        forEachAddress { _, _, address in if let address { addresses.append(address) } }
        return addresses
    }

    /// Calls `body` with each getifaddrs entry: interface name, flags, numeric address if IP.
    private static func forEachAddress(_ body: (String, UInt32, String?) -> Void) {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            let address: UnsafeMutablePointer<sockaddr>? = current.pointee.ifa_addr
            body(String(cString: current.pointee.ifa_name), current.pointee.ifa_flags,
                 address.flatMap { IPAddress.numericHost($0) })
            entry = current.pointee.ifa_next
        }
    }
}
