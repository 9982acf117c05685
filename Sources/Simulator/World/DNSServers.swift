import CellpathCore
import Glibc
import SystemSupport

/// One dnsmasq instance of the world: which namespace, which addresses, which names.
struct DNSServer: Sendable {
    /// `carrier` or `wifi`; names the pid file.
    var name: String
    var namespace: String
    /// Where it listens (port 53): its IPv4 address first, then its IPv6 one, if any.
    var listenAddresses: [String]
    /// Host records: name → its addresses (A and AAAA).
    var records: [(String, [String])]

    /// The carrier DNS (handed out with bearers) and the Wi-Fi DNS of `topology`, both on both
    /// families. In a NAT64 world the API has no AAAA, and the carrier's IPv6 DNS is DNS64
    /// (`DNS64Server`), not dnsmasq.
    static func all(_ topology: WorldTopology, nat64: Bool) -> [DNSServer] {
        typealias T = WorldTopology
        let api = nat64 ? [T.apiAddress] : [T.apiAddress, T.apiIPv6Address]
        return [
            DNSServer(
                name: "carrier", namespace: topology.carrierNamespace,
                listenAddresses: nat64 ? [T.carrierDNSAddress] : [T.carrierDNSAddress, T.carrierDNSIPv6],
                records: [
                    (T.apiHost, api), (T.operatorHost, api),
                    (T.carrierHost, [T.carrierEndpointAddress, T.carrierEndpointIPv6])
                ]),
            // The identification endpoint is reachable only inside the carrier: Wi-Fi DNS
            // does not know it, as in real networks.
            DNSServer(
                name: "wifi", namespace: topology.inetNamespace, listenAddresses: [T.wifiGateway, T.wifiGatewayIPv6],
                records: [(T.apiHost, api), (T.operatorHost, api)])
        ]
    }

    /// TTL of every answer, in seconds (dnsmasq's default for its own records is 0: not to be cached).
    static let answerTTL = 60

    /// The dnsmasq command line: foreground, no config/hosts/upstreams, authoritative for .test,
    /// answers with a TTL of `answerTTL`.
    var arguments: [String] {
        [
            "ip", "netns", "exec", namespace, "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null",
            "--no-resolv", "--no-hosts", "--bind-dynamic"
        ] + listenAddresses.map { "--listen-address=\($0)" }
            + [
                "--port=53", "--pid-file=", "--user=root", "--log-facility=-", "--log-queries", "--local=/test/",
                "--local-ttl=\(Self.answerTTL)"
            ]
            + records.map { "--host-record=\(([$0.0] + $0.1).joined(separator: ","))" }
    }

    /// Where `sim status` says it serves, e.g. `100.64.0.53:53, [2001:db8:64::53]:53`.
    var listenDetail: String {
        listenAddresses.map { $0.contains(":") ? "[\($0)]:53" : "\($0):53" }.joined(separator: ", ")
    }

    /// Markers that identify this dnsmasq in /proc/PID/cmdline.
    var markers: [String] { ["dnsmasq", "--listen-address=\(listenAddresses[0])"] }

    /// Starts dnsmasq as a child with stdout/stderr on `logFD`, records its pid (`ip netns
    /// exec` execs in place, so the child's pid is dnsmasq's) and waits until it listens.
    func start(run: RunDirectory, logFD: Int32) throws -> pid_t {
        let pid = try Subprocess.start(arguments, Spawn.Options(stdout: logFD, stderr: logFD))
        try FileSystem.write("\(pid)\n", to: run.dnsPIDFile(name))
        let deadline = MonotonicClock.now + 5
        while MonotonicClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw CellpathError(
                    .unavailable,
                    "dnsmasq (\(name) DNS) exited with status \(Spawn.exitStatus(status)); see \(run.logFile)")
            }
            if isListening(pid: pid) { return pid }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        _ = Spawn.wait(pid)
        throw CellpathError(.unavailable, "dnsmasq (\(name) DNS) did not start listening on \(listenDetail)")
    }

    /// True once dnsmasq has its UDP sockets on every listen address.
    private func isListening(pid: pid_t) -> Bool {
        listenAddresses.allSatisfy { isUDPListening(pid: pid, address: $0, port: 53) }
    }
}

/// True when a UDP socket of process `pid`'s namespace is bound to `address`:`port` (read from
/// /proc/PID/net/udp or udp6: local address in hex as the kernel stores it, then the port).
func isUDPListening(pid: pid_t, address: String, port: UInt16) -> Bool {
    let portHex = String(port, radix: 16, uppercase: true).leftPadded(4)
    if let bytes = IPAddress.ipv4Bytes(address) {
        guard let table = FileSystem.readText("/proc/\(pid)/net/udp") else { return false }
        return table.contains(hex(words: [bytes]) + ":" + portHex)
    }
    guard let bytes = IPAddress.ipv6Bytes(address), let table = FileSystem.readText("/proc/\(pid)/net/udp6") else {
        return false
    }
    return table.contains(
        hex(words: stride(from: 0, to: 16, by: 4).map { Array(bytes[$0 ..< $0 + 4]) }) + ":" + portHex)
}

/// Addresses as /proc/net/udp writes them: each 32-bit word in host (little-endian) order, in hex.
private func hex(words: [[UInt8]]) -> String {
    words.map { $0.reversed().map { String($0, radix: 16, uppercase: true).leftPadded(2) }.joined() }.joined()
}

extension String {
    /// Pads with zeros on the left to `width`.
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
