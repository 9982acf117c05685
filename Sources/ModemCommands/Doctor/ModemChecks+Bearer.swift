import Bearers
import CellpathCore
import IPConfiguration

extension ModemChecks {
    /// The bearer against cellpath's record, and its interface against what cellpath needs:
    /// addresses, source rules and table routes, rp_filter (repaired with --fix), IPv6.
    mutating func bearer() -> [DoctorCheck] {
        guard let bearer = report.status?.bearer, let interface = report.modem.interfaces.first else { return [] }
        let record: BearerRecord?
        do throws(CellpathError) {
            record = try records.load(for: report.modem)
        } catch {
            return [check("bearer", .fail, error.message, remedy: error.hint ?? "cellpath bearer down moves it aside")]
        }
        let connected = bearer.state == .connected
        let shown = report.status?.redacted(disclosure).bearer
        var evidence = ["state: \(bearer.state.rawValue)", "interface: \(interface)"]
        if let address = shown?.ipv4Address { evidence.append("IPv4: \(disclosure.reveal(address, as: .ipAddress))") }
        if let address = shown?.ipv6Address { evidence.append("IPv6: \(disclosure.reveal(address, as: .ipAddress))") }
        if !bearer.dnsServers.isEmpty { evidence.append("DNS: \(bearer.dnsServers.joined(separator: ", "))") }
        let recorded = record.map { $0.connectedByCellpath ? "connected by cellpath" : "reused" } ?? "none"
        evidence.append("cellpath record: \(recorded)")
        var checks: [DoctorCheck] = []
        switch (connected, record) {
        case (false, .some):
            staleRecord = true
            checks.append(
                check(
                    "bearer", .fail, "the bearer is down but cellpath's record of it remains",
                    evidence: evidence,
                    remedy: "cellpath doctor --fix, or cellpath bearer down: either removes cellpath's "
                        + "configuration of the interface and the record"))
        case (false, nil):
            checks.append(
                check(
                    "bearer", .pass, "no bearer connected (cellpath connects one when it needs it)",
                    evidence: evidence))
        case (true, _):
            let who = record?.connectedByCellpath == true ? "by cellpath" : "by another program (cellpath reuses it)"
            checks.append(check("bearer", .pass, "connected \(who)", evidence: evidence))
        }
        let state: InterfaceInspection
        do throws(CellpathError) {
            state = try InterfaceInspection.read(interface)
        } catch {
            return checks + [check("interface", .fail, error.message, remedy: error.hint)]
        }
        checks.append(interfaceCheck(bearer, record, state))
        if let routing = routingCheck(record, state) { checks.append(routing) }
        if connected, bearer.ipv4Address != nil { checks.append(reversePathFilterCheck(state)) }
        checks.append(ipv6Check(bearer, state))
        if connected, state.isUp, bearer.ipv4Address.map({ a in state.addresses.contains { $0.address == a } }) ?? true,
            bearer.ipv6Address.map({ a in state.addresses.contains { $0.address == a } }) ?? true
        {
            usablePath = CellularPath(
                interfaceName: interface, ipv4Address: bearer.ipv4Address,
                ipv6Address: bearer.ipv6Address, dnsServers: bearer.dnsServers, mtu: bearer.mtu)
        }
        return checks
    }

    private func show(_ address: String) -> String { disclosure.reveal(address, as: .ipAddress) }

    /// The interface is up and holds the bearer's addresses, and nothing cellpath did not put there.
    private func interfaceCheck(
        _ bearer: BearerStatus, _ record: BearerRecord?,
        _ state: InterfaceInspection
    ) -> DoctorCheck {
        let name = state.interface
        var evidence = ["\(name): \(state.exists ? (state.isUp ? "up" : "down") : "missing")"]
        evidence += state.addresses.map {
            "address \(show($0.address))/\($0.prefixLength)\($0.isGlobal ? "" : " (link)")"
        }
        guard state.exists else {
            return check(
                "interface", .fail, "\(name) is missing", evidence: evidence,
                remedy: "cellpath bearer down removes the record of a bearer whose interface is gone")
        }
        let expected = [bearer.ipv4Address, bearer.ipv6Address].compactMap { $0 }
        let missing =
            bearer.state != .connected
            ? []
            : expected.filter { address in !state.addresses.contains { $0.address == address } }
        if !missing.isEmpty || (bearer.state == .connected && !state.isUp) {
            return check(
                "interface", .fail,
                "\(name) does not carry the bearer: "
                    + (missing.isEmpty
                        ? "it is down"
                        : "\(missing.map(show).joined(separator: ", ")) not on it"),
                evidence: evidence, remedy: "cellpath bearer up configures it")
        }
        let addressing = record?.addressing?.addressing
        let recorded = [addressing?.address, addressing?.ipv6?.address].compactMap { $0 }
        let global = state.addresses.filter(\.isGlobal).map(\.address)
        let foreign = record == nil ? global : global.filter { !recorded.contains($0) }
        if !foreign.isEmpty {
            let what = foreign.map(show).joined(separator: ", ")
            if bearer.state != .connected {
                return check(
                    "interface", .warn,
                    "\(name) has addresses cellpath did not put there, while the bearer is down: \(what)",
                    evidence: evidence,
                    remedy: "a stale configuration of another program: remove them "
                        + "(ip address del … dev \(name)); "
                        + "cellpath bearer down --force removes what has cellpath's shape")
            }
            return check(
                "interface", .warn, "\(name) has addresses cellpath did not put there: \(what)",
                evidence: evidence,
                remedy: "another program configured it: cellpath uses it as it is; to start clean, take that "
                    + "program's bearer down (cellpath bearer down --force) "
                    + "or remove them (ip address del … dev \(name))")
        }
        guard bearer.state == .connected else {
            return check("interface", .pass, "\(name) carries no configuration of another program", evidence: evidence)
        }
        return check("interface", .pass, "\(name) is up with the bearer's addresses", evidence: evidence)
    }

    /// The source rules and routes (its table's, the main table's default) cellpath's record says
    /// it added are still there.
    private func routingCheck(_ record: BearerRecord?, _ state: InterfaceInspection) -> DoctorCheck? {
        guard let applied = record?.addressing else { return nil }
        var evidence = [
            "table \(applied.table); rules from: "
                + (state.ruleSources.isEmpty ? "none" : state.ruleSources.map(show).joined(separator: ", "))
        ]
        evidence.append(
            "table default route: IPv4 \(state.tableDefaultRoute.ipv4 ? "yes" : "no"), "
                + "IPv6 \(state.tableDefaultRoute.ipv6 ? "yes" : "no")")
        let metrics = state.mainDefaultRouteMetrics.ipv4 + state.mainDefaultRouteMetrics.ipv6
        evidence.append(
            "main default routes through \(state.interface): "
                + (metrics.isEmpty ? "none" : "metrics \(metrics.map(String.init).joined(separator: ", "))"))
        var missing: [String] = []
        if let address = applied.addressing.address {
            if applied.addedRule && !state.ruleSources.contains(address) {
                missing.append("the rule from \(show(address)) lookup \(applied.table)")
            }
            if applied.addedTableRoute && !state.tableDefaultRoute.ipv4 {
                missing.append("the default route of table \(applied.table)")
            }
            if let metric = applied.addedMainRouteMetric, !state.mainDefaultRouteMetrics.ipv4.contains(metric) {
                missing.append("the default route through \(state.interface) (metric \(metric))")
            }
        }
        if let ipv6 = applied.addressing.ipv6 {
            if applied.addedIPv6Rule && !state.ruleSources.contains(ipv6.address) {
                missing.append("the rule from \(show(ipv6.address)) lookup \(applied.table)")
            }
            if applied.addedIPv6TableRoute && !state.tableDefaultRoute.ipv6 {
                missing.append("the IPv6 default route of table \(applied.table)")
            }
        }
        guard missing.isEmpty else {
            return check(
                "routing", .fail, "missing: \(missing.joined(separator: "; "))", evidence: evidence,
                remedy: "cellpath bearer down, then cellpath bearer up, restores them")
        }
        return check(
            "routing", .pass, "the source rule and routes cellpath added are in place",
            evidence: evidence)
    }

    /// Strict reverse-path filtering drops the bearer's replies: loose is needed (--fix sets it).
    private func reversePathFilterCheck(_ state: InterfaceInspection) -> DoctorCheck {
        let name = state.interface
        let evidence = [
            "net.ipv4.conf.\(name).rp_filter = \(state.rpFilter.map(String.init) ?? "unreadable")",
            "net.ipv4.conf.all.rp_filter = \(state.rpFilterAll.map(String.init) ?? "unreadable")"
        ]
        guard state.effectiveRPFilter == 1 else {
            return check(
                "rp_filter", .pass, "reverse-path filtering on \(name) lets the bearer's replies in",
                evidence: evidence)
        }
        let remedy = "cellpath doctor --fix, or sudo sysctl -w net.ipv4.conf.\(name).rp_filter=2"
        guard fix else {
            return check(
                "rp_filter", .fail, "strict reverse-path filtering on \(name) drops the bearer's replies",
                evidence: evidence, remedy: remedy)
        }
        do throws(CellpathError) {
            let previous = try InterfaceInspection.loosenReversePathFilter(name)
            var fixed = check(
                "rp_filter", .pass, "reverse-path filtering on \(name) was strict: now loose",
                evidence: evidence)
            fixed.fixed = "net.ipv4.conf.\(name).rp_filter: \(previous.map(String.init) ?? "?") → 2"
            return fixed
        } catch {
            return check(
                "rp_filter", .fail,
                "strict reverse-path filtering on \(name), and --fix failed: \(error.message)",
                evidence: evidence, remedy: "run cellpath doctor --fix with sudo")
        }
    }

    /// IPv6 enabled on the interface with a global address when the bearer has IPv6.
    private func ipv6Check(_ bearer: BearerStatus, _ state: InterfaceInspection) -> DoctorCheck {
        let name = state.interface
        let global = state.addresses.filter { $0.isGlobal && $0.address.contains(":") }
        let evidence = [
            "net.ipv6.conf.\(name).disable_ipv6 = \(state.disableIPv6.map(String.init) ?? "unreadable")",
            "global IPv6 addresses: "
                + (global.isEmpty ? "none" : global.map { show($0.address) }.joined(separator: ", "))
        ]
        guard bearer.state == .connected, bearer.ipv6Address != nil else {
            return check("ipv6", .pass, "the bearer has no IPv6", evidence: evidence)
        }
        if state.disableIPv6 == 1 {
            return check(
                "ipv6", .fail, "the bearer has IPv6 but it is disabled on \(name)", evidence: evidence,
                remedy: "cellpath bearer up enables it; "
                    + "or sudo sysctl -w net.ipv6.conf.\(name).disable_ipv6=0")
        }
        guard !global.isEmpty else {
            return check(
                "ipv6", .fail, "the bearer has IPv6 but \(name) has no global IPv6 address",
                evidence: evidence,
                remedy: "cellpath bearer up configures it")
        }
        return check("ipv6", .pass, "IPv6 on \(name) with a global address", evidence: evidence)
    }
}
