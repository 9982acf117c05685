import CNetlink
import CellpathCore
import Glibc
import SystemSupport

/// A bearer whose modem reports only a link-local IPv6 address (t7xx firmware) gets its global
/// address by SLAAC from the network's router advertisement.
extension InterfaceConfigurator {
    /// How long a bring-up waits for a router advertisement's address.
    public static let slaacWait: Duration = .seconds(6)

    /// The kernel settings of `interface` that let it take an address from router advertisements,
    /// and the values they get: advertisements accepted and addresses formed from them, but not
    /// their default route (it would join the main table: cellpath routes the bearer itself), and
    /// router solicitations sent once the link-local address is up.
    static let slaacSettings = [
        ("disable_ipv6", "0"), ("accept_ra", "1"), ("autoconf", "1"), ("accept_ra_defrtr", "0"),
        ("router_solicitations", "3")
    ]

    /// The global IPv6 address `interface` forms by SLAAC: on that interface only, with the
    /// settings above, the modem's link-local address `linkLocal` added (which makes the kernel
    /// solicit a router), waiting up to `timeout` for the address. Then everything is put back as
    /// it was (settings, addresses, link state), so that `apply` adds the address as its own and
    /// `undo` removes it. Nil when no router advertisement came in time. A global address the
    /// interface holds already (a reused bearer's) is returned as it is. Cancellable.
    public func addressBySLAAC(
        interface: String, linkLocal: String, timeout: Duration = slaacWait
    ) async throws(CellpathError) -> IPv6Addressing? {
        guard Self.isValidInterfaceName(interface) else {
            throw CellpathError(.dataError, "couldn't configure the interface: '\(interface.prefix(32))' is not one")
        }
        if let held = Self.globalIPv6(on: interface).first { return held }
        let index = Int32(if_nametoindex(interface))
        guard index > 0 else { throw CellpathError(.unavailable, "couldn't configure \(interface): no such interface") }
        let netlink = try Netlink()
        var previous: [(String, String)] = []
        var broughtUp = false
        var addedLinkLocal = false
        defer {
            let linkLocalAddress = Family.ipv6(IPv6Addressing(address: linkLocal, prefixLength: 64))
            if addedLinkLocal {
                _ = withAddress(linkLocalAddress, index) { rtnl_addr_delete(netlink.socket, $0, 0) }
            }
            for formed in Self.globalIPv6(on: interface) {
                _ = withAddress(.ipv6(formed), index) { rtnl_addr_delete(netlink.socket, $0, 0) }
            }
            if broughtUp { _ = changeLink(netlink, index, up: false, mtu: nil) }
            for (name, value) in previous.reversed() {
                try? FileSystem.overwrite(value + "\n", at: Self.ipv6SettingPath(interface, name))
            }
        }
        for (name, value) in Self.slaacSettings {
            let path = Self.ipv6SettingPath(interface, name)
            guard let current = FileSystem.readText(path)?.filter({ !$0.isWhitespace }), current != value else {
                continue
            }
            do {
                try FileSystem.overwrite(value + "\n", at: path)
            } catch {
                throw CellpathError(
                    error.code == EACCES || error.code == EPERM ? .permission : .unavailable,
                    "couldn't set \(name) of \(interface) for SLAAC: \(error.reason)")
            }
            previous.append((name, current))
        }
        if !InterfaceSnapshot.read(interface).isUp {
            let rc = changeLink(netlink, index, up: true, mtu: nil)
            guard rc == 0 else { throw Self.failure("set \(interface) up", rc) }
            broughtUp = true
        }
        let linkLocalAddress = Family.ipv6(IPv6Addressing(address: linkLocal, prefixLength: 64))
        let rc = withAddress(linkLocalAddress, index) { rtnl_addr_add(netlink.socket, $0, NLM_F_EXCL) }
        guard rc == 0 || Netlink.exists(rc) else { throw Self.failure("add the address \(linkLocal)/64", rc) }
        addedLinkLocal = rc == 0
        let deadline = MonotonicClock.now + Double(timeout.components.seconds)
        while MonotonicClock.now < deadline {
            if let formed = Self.globalIPv6(on: interface).first { return formed }
            do {
                try await Task.sleep(for: .milliseconds(100))
            } catch {
                throw CellpathError(.cancelled, "cancelled while waiting for a router advertisement on \(interface)")
            }
        }
        return nil
    }

    /// The global IPv6 addresses `interface` holds.
    static func globalIPv6(on interface: String) -> [IPv6Addressing] {
        let addresses = (try? InterfaceInspection.read(interface).addresses) ?? []
        return addresses.filter { $0.isGlobal && $0.address.contains(":") }.map {
            IPv6Addressing(address: $0.address, prefixLength: $0.prefixLength)
        }
    }

    static func ipv6SettingPath(_ interface: String, _ name: String) -> String {
        "/proc/sys/net/ipv6/conf/\(interface)/\(name)"
    }
}
