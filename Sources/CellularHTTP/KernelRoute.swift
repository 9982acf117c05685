import CNetlink
import Glibc
import SystemSupport

/// Asks the kernel which interface it would send a packet through — with policy rules applied,
/// as for its own replies (a TCP reset for a segment that reaches a closed socket).
enum KernelRoute {
    /// True when packets from the socket's local address to its peer leave through the device
    /// the socket is bound to. Then closing it at once cannot leak: even the kernel's answers to
    /// late segments follow the bearer (a source-address rule, as cellpath's bearer set-up makes).
    /// False when unknown. Thread-safe; one netlink round trip.
    static func repliesFollowBinding(of fd: Int32) -> Bool {
        var device = [CChar](repeating: 0, count: 16)  // IFNAMSIZ
        var length = socklen_t(device.count)
        guard getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, &device, &length) == 0, length > 1 else { return false }
        let boundIndex = Int32(if_nametoindex(device))
        guard boundIndex > 0, let local = address(of: fd, peer: false), let peer = address(of: fd, peer: true) else {
            return false
        }
        return outputInterface(from: local, to: peer) == boundIndex
    }

    /// True when packets from `address` leave through `interface` whatever their destination,
    /// judged by a destination that no specific route covers (a documentation address). False
    /// when unknown. Thread-safe; one netlink round trip.
    static func packets(from address: String, leaveThrough interface: String) -> Bool {
        let index = Int32(if_nametoindex(interface))
        guard index > 0 else { return false }
        if let local = IPAddress.ipv4Bytes(address), let probe = IPAddress.ipv4Bytes("198.51.100.1") {
            return outputInterface(from: (AF_INET, local), to: (AF_INET, probe)) == index
        }
        if let local = IPAddress.ipv6Bytes(address), let probe = IPAddress.ipv6Bytes("2001:db8::1") {
            return outputInterface(from: (AF_INET6, local), to: (AF_INET6, probe)) == index
        }
        return false
    }

    /// The local or peer address of a socket as raw bytes with its family.
    private static func address(of fd: Int32, peer: Bool) -> (family: Int32, bytes: [UInt8])? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
            }
        }
        guard rc == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafeBytes(of: &storage) { raw in
                let sin = raw.load(as: sockaddr_in.self)
                return (AF_INET, withUnsafeBytes(of: sin.sin_addr) { Array($0) })
            }
        case AF_INET6:
            return withUnsafeBytes(of: &storage) { raw in
                let sin6 = raw.load(as: sockaddr_in6.self)
                return (AF_INET6, withUnsafeBytes(of: sin6.sin6_addr) { Array($0) })
            }
        default:
            return nil
        }
    }

    /// `ip route get PEER from LOCAL`: the output interface index, or 0.
    private static func outputInterface(
        from local: (family: Int32, bytes: [UInt8]),
        to peer: (family: Int32, bytes: [UInt8])
    ) -> Int32 {
        guard local.family == peer.family, let socket = nl_socket_alloc() else { return 0 }
        defer { nl_socket_free(socket) }
        guard nl_connect(socket, NETLINK_ROUTE) == 0,
            let message = nlmsg_alloc_simple(Int32(RTM_GETROUTE), 0)
        else { return 0 }
        defer { nlmsg_free(message) }
        var header = rtmsg()
        header.rtm_family = UInt8(local.family)
        header.rtm_dst_len = UInt8(peer.bytes.count * 8)
        header.rtm_src_len = UInt8(local.bytes.count * 8)
        guard nlmsg_append(message, &header, MemoryLayout<rtmsg>.size, Int32(NLMSG_ALIGNTO)) == 0,
            nla_put(message, Int32(RTA_DST.rawValue), Int32(peer.bytes.count), peer.bytes) == 0,
            nla_put(message, Int32(RTA_SRC.rawValue), Int32(local.bytes.count), local.bytes) == 0,
            nl_send_auto(socket, message) >= 0
        else { return 0 }

        var answer = RouteAnswer()
        let parse: nl_recvmsg_msg_cb_t = { message, context in
            var route: OpaquePointer?
            guard let message, let header = nlmsg_hdr(message), rtnl_route_parse(header, &route) == 0,
                let route
            else { return Int32(NL_SKIP.rawValue) }
            defer { rtnl_route_put(route) }
            if rtnl_route_get_nnexthops(route) > 0, let hop = rtnl_route_nexthop_n(route, 0) {
                context!.assumingMemoryBound(to: RouteAnswer.self).pointee.interface = Int32(
                    rtnl_route_nh_get_ifindex(hop))
            }
            return Int32(NL_OK.rawValue)
        }
        withUnsafeMutablePointer(to: &answer) { pointer in
            _ = nl_socket_modify_cb(socket, NL_CB_VALID, NL_CB_CUSTOM, parse, pointer)
            _ = nl_recvmsgs_default(socket)
        }
        return answer.interface
    }

    private struct RouteAnswer {
        var interface: Int32 = 0
    }
}

/// Whether an interface has a source-address rule for a bearer address.
public enum SourceAddressRule {
    /// True when the kernel sends what comes from `address` through `interface`, whatever the
    /// peer: what a source-address rule gives (`ip rule add from ADDRESS table T`, with a
    /// default route through the interface in table T), as the modem layer's bearer set-up and
    /// `cellpath sim` make. Without one, the kernel's own answers for a socket that is gone (a
    /// TCP reset, an ICMP port unreachable: a fetch cancelled at the wrong moment, a peer that
    /// answers after cellpath exited) follow the main routing table, through another network
    /// with the bearer's address. Asks the kernel (`ip route get PEER from ADDRESS` over
    /// netlink); false when `address` is not numeric or the kernel cannot tell. Any thread.
    public static func exists(interface: String, address: String) -> Bool {
        KernelRoute.packets(from: address, leaveThrough: interface)
    }
}
