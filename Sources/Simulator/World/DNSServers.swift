import CellpathCore
import Glibc
import SystemSupport

/// One dnsmasq instance of the world: which namespace, which address, which names.
struct DNSServer: Sendable {
    /// `carrier` or `wifi`; names the pid file.
    var name: String
    var namespace: String
    var listenAddress: String
    /// Host records: name → IPv4 address.
    var records: [(String, String)]

    /// The carrier DNS (handed out with bearers) and the Wi-Fi DNS of `topology`.
    static func all(_ topology: WorldTopology) -> [DNSServer] {
        typealias T = WorldTopology
        return [
            DNSServer(name: "carrier", namespace: topology.carrierNamespace, listenAddress: T.carrierDNSAddress,
                      records: [(T.apiHost, T.apiAddress), (T.carrierHost, T.carrierEndpointAddress)]),
            // The identification endpoint is reachable only inside the carrier: Wi-Fi DNS
            // does not know it, as in real networks.
            DNSServer(name: "wifi", namespace: topology.inetNamespace, listenAddress: T.wifiGateway,
                      records: [(T.apiHost, T.apiAddress)]),
        ]
    }

    /// TTL of every answer, in seconds (dnsmasq's default for its own records is 0: not to be cached).
    static let answerTTL = 60

    /// The dnsmasq command line: foreground, no config/hosts/upstreams, authoritative for .test,
    /// answers with a TTL of `answerTTL`.
    var arguments: [String] {
        ["ip", "netns", "exec", namespace, "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null",
         "--no-resolv", "--no-hosts", "--bind-dynamic", "--listen-address=\(listenAddress)", "--port=53",
         "--pid-file=", "--user=root", "--log-facility=-", "--log-queries", "--local=/test/", "--local-ttl=\(Self.answerTTL)"]
            + records.map { "--host-record=\($0.0),\($0.1)" }
    }

    /// Markers that identify this dnsmasq in /proc/PID/cmdline.
    var markers: [String] { ["dnsmasq", "--listen-address=\(listenAddress)"] }

    /// Starts dnsmasq as a child with stdout/stderr on `logFD`, records its pid (`ip netns
    /// exec` execs in place, so the child's pid is dnsmasq's) and waits until it listens.
    func start(run: RunDirectory, logFD: Int32) throws -> pid_t {
        let pid = try Subprocess.start(arguments, Spawn.Options(stdout: logFD, stderr: logFD))
        try FileSystem.write("\(pid)\n", to: run.dnsPIDFile(name))
        let deadline = MonotonicClock.now + 5
        while MonotonicClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw CellpathError(.unavailable, "dnsmasq (\(name) DNS) exited with status \(Spawn.exitStatus(status)); see \(run.logFile)")
            }
            if isListening(pid: pid) { return pid }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        _ = Spawn.wait(pid)
        throw CellpathError(.unavailable, "dnsmasq (\(name) DNS) did not start listening on \(listenAddress):53")
    }

    /// True once dnsmasq has its UDP socket on the listen address (read from its namespace's
    /// /proc/PID/net/udp, local address in hex, port 0035).
    private func isListening(pid: pid_t) -> Bool {
        guard let table = FileSystem.readText("/proc/\(pid)/net/udp"), let bytes = IPAddress.ipv4Bytes(listenAddress) else { return false }
        let hex = bytes.reversed().map { String($0, radix: 16, uppercase: true).leftPadded(2) }.joined()
        return table.contains("\(hex):0035")
    }
}

extension String {
    /// Pads with zeros on the left to `width`.
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
