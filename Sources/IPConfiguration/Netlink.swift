import CNetlink
import CellpathCore
import Glibc

/// One rtnetlink socket (libnl-route), in the network namespace of the thread that opens it.
/// Not shared: each operation opens its own.
final class Netlink {
    let socket: OpaquePointer

    init() throws(CellpathError) {
        guard let socket = nl_socket_alloc() else {
            throw CellpathError(.internalError, "couldn't allocate a netlink socket")
        }
        let rc = nl_connect(socket, NETLINK_ROUTE)
        guard rc == 0 else {
            nl_socket_free(socket)
            throw CellpathError(.unavailable, "couldn't open rtnetlink: \(Netlink.describe(rc))")
        }
        self.socket = socket
    }

    deinit { nl_socket_free(socket) }

    /// libnl's text for a negative error code.
    static func describe(_ rc: Int32) -> String { String(cString: nl_geterror(rc)) }

    /// True when `rc` says the object already exists.
    static func exists(_ rc: Int32) -> Bool { rc == -NLE_EXIST }

    /// True when `rc` says the object was not there.
    static func absent(_ rc: Int32) -> Bool { rc == -NLE_OBJ_NOTFOUND || rc == -NLE_NOADDR || rc == -NLE_NODEV }

    /// A permission error from the kernel: CAP_NET_ADMIN is missing.
    static func denied(_ rc: Int32) -> Bool { rc == -NLE_PERM }

    /// `text` (`address/len`) as a libnl address of `family`, nil when it is not one; release it
    /// with `nl_addr_put`.
    static func address(_ text: String, _ family: Int32 = AF_INET) -> OpaquePointer? {
        var address: OpaquePointer?
        guard nl_addr_parse(text, family, &address) == 0 else { return nil }
        return address
    }
}
