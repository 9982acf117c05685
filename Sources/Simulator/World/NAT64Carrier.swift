import CellpathCore
import Glibc
import SystemSupport

/// A child program of the world besides dnsmasq (tayga, unbound), as the daemon tracks it.
struct WorldChild: Sendable {
    var name: String
    /// Where it serves, for `sim status`.
    var detail: String
    var pid: pid_t
    var running = true
}

/// The NAT64 carrier (docs/simulator.md "NAT64 carrier"), in the carrier namespace: tayga
/// translates between IPv6 destinations in 2001:db8:64:ff9b::/96 and IPv4 on its TUN `nat64`, giving each
/// IPv6 source an address of the pool 100.64.96.0/24; unbound answers on 2001:db8:64::53 with its
/// dns64 module, synthesising AAAA from A for names without one (it forwards to the carrier
/// dnsmasq). Both run as children of the daemon with their files under the run directory.
struct NAT64Carrier {
    var topology: WorldTopology
    var run: RunDirectory
    /// The modems behind NAT64: each one's bearer address gets its fixed egress address.
    var modems: [Int]

    var directory: String { "\(run.path)/nat64" }
    var taygaConfigFile: String { "\(directory)/tayga.conf" }
    var unboundConfigFile: String { "\(directory)/unbound.conf" }

    /// tayga.conf: the NAT64 prefix, the pool, tayga's own addresses and one static map per
    /// modem (its bearer address ↔ its egress address, taken out of the pool).
    var taygaConfig: String {
        typealias T = WorldTopology
        let maps = modems.map { "map \(topology.nat64EgressAddress($0)) \(topology.bearerIPv6Address($0))\n" }.joined()
        return """
            tun-device \(T.nat64Interface)
            ipv4-addr \(T.nat64IPv4Address)
            ipv6-addr \(T.nat64IPv6Address)
            prefix \(T.nat64Prefix)
            dynamic-pool \(T.nat64Pool)
            data-dir \(directory)

            """ + maps
    }

    /// unbound.conf: DNS64 in front of the carrier dnsmasq, in the foreground, logging to stderr,
    /// with no trust anchor, chroot or user switch; `test.` is served (unbound blocks it by default).
    var unboundConfig: String {
        typealias T = WorldTopology
        return """
            server:
                interface: \(T.carrierDNSIPv6)
                port: 53
                do-daemonize: no
                use-syslog: no
                logfile: ""
                log-queries: yes
                verbosity: 1
                username: ""
                chroot: ""
                directory: "\(directory)"
                pidfile: ""
                num-threads: 1
                so-reuseport: no
                access-control: ::/0 allow
                module-config: "dns64 iterator"
                dns64-prefix: \(T.nat64Prefix)
                local-zone: "test." nodefault
                domain-insecure: "test."
                qname-minimisation: no
                cache-max-ttl: \(DNSServer.answerTTL)
            forward-zone:
                name: "."
                forward-addr: \(T.carrierDNSAddress)

            """
    }

    /// Writes the configurations and creates tayga's TUN (`tayga --mktun`); the caller then
    /// routes through it (`WorldBuilder.configureNAT64`) and calls `start`.
    func prepare() throws {
        try FileSystem.makeDirectories(directory, mode: 0o755)
        try FileSystem.write(taygaConfig, to: taygaConfigFile)
        try FileSystem.write(unboundConfig, to: unboundConfigFile)
        try Subprocess.check([
            "ip", "netns", "exec", topology.carrierNamespace, "tayga", "--mktun", "--config", taygaConfigFile
        ])
    }

    /// Starts tayga, then unbound (after the carrier dnsmasq it forwards to), with their output
    /// on `logFD`, and waits until each serves. On failure, what started is stopped.
    func start(logFD: Int32) throws -> [WorldChild] {
        let ns = topology.carrierNamespace
        let tayga = try Subprocess.start(
            ["ip", "netns", "exec", ns, "tayga", "--nodetach", "--config", taygaConfigFile],
            Spawn.Options(stdout: logFD, stderr: logFD))
        do {
            try waitUntil("tayga", pid: tayga) { isAttached() }
        } catch {
            stop(tayga)
            throw error
        }
        let unbound: pid_t
        do {
            unbound = try Subprocess.start(
                ["ip", "netns", "exec", ns, "unbound", "-d", "-c", unboundConfigFile],
                Spawn.Options(stdout: logFD, stderr: logFD))
        } catch {
            stop(tayga)
            throw error
        }
        do {
            try waitUntil("unbound", pid: unbound) {
                isUDPListening(pid: unbound, address: WorldTopology.carrierDNSIPv6, port: 53)
            }
        } catch {
            stop(unbound)
            stop(tayga)
            throw error
        }
        typealias T = WorldTopology
        return [
            WorldChild(
                name: "nat64", detail: "\(T.nat64Prefix) ↔ \(T.nat64Pool) on \(T.nat64Interface) in \(ns)", pid: tayga),
            WorldChild(name: "dns64", detail: "[\(T.carrierDNSIPv6)]:53 in \(ns)", pid: unbound)
        ]
    }

    /// True once tayga holds its TUN (the link has a carrier).
    private func isAttached() -> Bool {
        guard
            let result = try? Subprocess.run([
                "ip", "-n", topology.carrierNamespace, "-o", "link", "show", WorldTopology.nat64Interface
            ]),
            result.status == 0
        else { return false }
        return !result.text.contains("NO-CARRIER")
    }

    private func waitUntil(_ name: String, pid: pid_t, _ ready: () -> Bool) throws {
        let deadline = MonotonicClock.now + 5
        while MonotonicClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw CellpathError(
                    .unavailable,
                    "\(name) (NAT64 carrier) exited with status \(Spawn.exitStatus(status)); see \(run.logFile)")
            }
            if ready() { return }
            usleep(20_000)
        }
        stop(pid)
        throw CellpathError(
            .unavailable, "\(name) (NAT64 carrier) did not start serving within 5 s; see \(run.logFile)")
    }

    private func stop(_ pid: pid_t) {
        kill(pid, SIGTERM)
        if !Processes.waitGone(pid, seconds: 3) { kill(pid, SIGKILL); _ = Spawn.wait(pid) }
    }
}
