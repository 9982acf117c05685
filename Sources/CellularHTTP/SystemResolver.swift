import Glibc
import SystemSupport

/// The system's resolver (getaddrinfo, as curl's own resolver asks it on the default network):
/// the addresses of a host, in the order it gives them (each once, whatever the socket types it
/// lists it for). Blocking.
enum SystemResolver {
    /// `host`'s addresses; empty when it has none or the lookup failed (the request that follows
    /// then resolves, and fails, as it would have).
    static func addresses(of host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr.flatMap({ IPAddress.numericHost($0) }),
                !addresses.contains(address)
            {
                addresses.append(address)
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }
}
