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
        var snapshot = InterfaceSnapshot(
            exists: if_nametoindex(name) != 0, isUp: false, hasCarrier: false, addresses: [])
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

    /// Every IPv4 and IPv6 address of every interface, with the interface and the prefix
    /// length of its network (from the netmask).
    public static func networks() -> [InterfaceNetwork] {
        var networks: [InterfaceNetwork] = []
        forEachEntry { entry in
            guard let address = entry.ifa_addr.flatMap({ IPAddress.numericHost($0) }),
                let mask = entry.ifa_netmask.flatMap({ IPAddress.numericHost($0) }),
                let maskBytes = IPAddress.ipv4Bytes(mask) ?? IPAddress.ipv6Bytes(mask)
            else { return }
            networks.append(
                InterfaceNetwork(
                    interface: String(cString: entry.ifa_name), address: address,
                    prefixLength: maskBytes.reduce(0) { $0 + $1.nonzeroBitCount }))
        }
        return networks
    }

    /// Calls `body` with each getifaddrs entry: interface name, flags, numeric address if IP.
    private static func forEachAddress(_ body: (String, UInt32, String?) -> Void) {
        forEachEntry { entry in
            body(String(cString: entry.ifa_name), entry.ifa_flags, entry.ifa_addr.flatMap { IPAddress.numericHost($0) })
        }
    }

    /// Calls `body` with each getifaddrs entry.
    private static func forEachEntry(_ body: (ifaddrs) -> Void) {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            body(current.pointee)
            entry = current.pointee.ifa_next
        }
    }
}

/// One address of an interface and the network it is on (address/prefixLength).
public struct InterfaceNetwork: Sendable, Equatable {
    public var interface: String
    /// Numeric IPv4 or IPv6 address.
    public var address: String
    public var prefixLength: Int

    public init(interface: String, address: String, prefixLength: Int) {
        self.interface = interface
        self.address = address
        self.prefixLength = prefixLength
    }
}
