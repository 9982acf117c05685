import SimulatorScenario

extension BearerAssignment {
    /// The assignment as a modem with `report` answers it: each reported field replaces the
    /// assignment's, in the families the bearer carries (DNS servers each with their family).
    func reported(as report: ReportedIPConfiguration?) -> BearerAssignment {
        guard let report else { return self }
        var reported = self
        if let address = report.ipv4Address { reported.ipv4?.address = address }
        if let address = report.ipv6Address { reported.ipv6?.address = address }
        if let servers = report.dnsServers {
            reported.ipv4?.dnsServers = servers.filter { !$0.contains(":") }
            reported.ipv6?.dnsServers = servers.filter { $0.contains(":") }
        }
        if let mtu = report.mtu { reported.mtu = mtu }
        return reported
    }
}
