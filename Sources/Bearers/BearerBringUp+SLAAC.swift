import CellpathCore
import IPConfiguration
import SystemSupport

extension BearerBringUp {
    /// Whether `address` is an IPv6 link-local address (fe80::/10).
    static func isLinkLocal(_ address: String) -> Bool {
        guard let bytes = IPAddress.ipv6Bytes(address) else { return false }
        return bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80
    }

    /// `bearer` with the global IPv6 address its interface formed by SLAAC in place of the
    /// link-local one its modem reported (t7xx firmware): router advertisements accepted on that
    /// interface only, for up to `InterfaceConfigurator.slaacWait`. Refuses (76) when none came.
    func addressBySLAAC(
        _ bearer: BearerStatus, linkLocal: String, interface: String
    ) async throws(CellpathError) -> BearerStatus {
        let wait = InterfaceConfigurator.slaacWait
        guard
            let formed = try await InterfaceConfigurator().addressBySLAAC(
                interface: interface, linkLocal: linkLocal, timeout: wait)
        else {
            throw CellpathError(
                .protocolError,
                "modem \(modem.index) gave only a link-local IPv6 address (\(linkLocal)) and no router advertisement "
                    + "came on \(interface) within \(wait.components.seconds) s",
                hint: "the network gives this bearer no global IPv6 address: ask for IPv4 (--ip-type ipv4), "
                    + "or reconnect the bearer")
        }
        logger.info("\(interface) formed \(formed.address)/\(formed.prefixLength) by SLAAC")
        var bearer = bearer
        bearer.ipv6Address = formed.address
        bearer.ipv6PrefixLength = formed.prefixLength
        bearer.ipv6Gateway = nil
        return bearer
    }
}
