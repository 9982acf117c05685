import CNetlink
import CellpathCore
import Glibc

/// Follows the cellular interface's links and addresses through netlink while a transfer runs,
/// so that a bearer that goes away (link down, carrier lost, address removed, interface deleted)
/// fails the hop at once instead of when its timeout expires. Confined to the transfer's thread.
final class PathWatch {
    private let path: CellularPath
    private let ipType: IPType
    private let socket: OpaquePointer?

    /// Subscribes to the kernel's link and address events; without a netlink socket only the
    /// checks after failures and the timeouts notice a path that goes away.
    init(path: CellularPath, ipType: IPType) {
        self.path = path
        self.ipType = ipType
        var socket = nl_socket_alloc()
        if let s = socket {
            let groups = [RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR].map { Int32($0.rawValue) }
            if nl_connect(s, NETLINK_ROUTE) != 0 || groups.contains(where: { nl_socket_add_membership(s, $0) != 0 })
                || nl_socket_set_nonblocking(s) != 0
            {
                nl_socket_free(s)
                socket = nil
            }
        }
        self.socket = socket
    }

    deinit {
        if let socket { nl_socket_free(socket) }
    }

    /// Readable when events are pending, to poll beside the transfer's sockets; -1 without a socket.
    var descriptor: Int32 { socket.map { nl_socket_get_fd($0) } ?? -1 }

    /// When events came since the last call, throws unless the path is still whole.
    func check(hop: Int) throws(FetchFailure) {
        if drainEvents() { try verify(hop: hop) }
    }

    /// Throws unless the interface exists, is up, has its carrier and holds the bearer addresses.
    func verify(hop: Int) throws(FetchFailure) {
        try path.verify(for: ipType, hop: hop, inUse: true)
    }

    /// Reads every pending event (what changed is read from the interface itself); true when any
    /// came, or some were lost (a full socket buffer).
    private func drainEvents() -> Bool {
        let fd = descriptor
        guard fd >= 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 8192)
        var any = false
        while true {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 { any = true; continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && errno == ENOBUFS { any = true; continue }
            return any
        }
    }
}
