import CellpathCore
import Glibc
import SystemSupport

/// One request on the daemon's control socket: a JSON object on one line.
struct ControlRequest: Codable, Sendable, Equatable {
    enum Command: String, Codable, Sendable {
        case status, connect, disconnect, stop, unlockFCC
        /// Lifecycle events (docs/simulator.md "Lifecycle events").
        case reset, swapSIM, removeSIM, suspend, resume, reportDNS
        /// The modem moves to another of its network's cells (`cell`).
        case handover
    }
    var command: Command
    /// The modem index for `connect`, `disconnect`, `unlockFCC` and the per-modem events (default 0).
    var modem: Int?
    /// `reset`: come back under the next free names (`cdc-wdm1`/`wwan1`) instead of the old ones.
    var renumber: Bool?
    /// `reset`: answer this many milliseconds late for `slowSeconds` (default: the scenario's
    /// `faults.slowAfterResetMs` / `slowAfterResetSeconds`).
    var slowMs: Int?
    var slowSeconds: Int?
    /// `swapSIM`: the identities of the SIM inserted.
    var sim: SIMIdentity?
    /// `reportDNS`: the DNS servers the modem reports from now on (e.g. `["0.0.0.0", "::"]`);
    /// absent or null: the carrier's.
    var dnsServers: [String]?
    /// `handover`: the index of the cell in the modem's `network.cells`.
    var cell: Int?

    init(
        command: Command, modem: Int? = nil, renumber: Bool? = nil, slowMs: Int? = nil, slowSeconds: Int? = nil,
        sim: SIMIdentity? = nil, dnsServers: [String]? = nil, cell: Int? = nil
    ) {
        self.cell = cell
        self.command = command
        self.modem = modem
        self.renumber = renumber
        self.slowMs = slowMs
        self.slowSeconds = slowSeconds
        self.sim = sim
        self.dnsServers = dnsServers
    }
}

/// The daemon's answer: one JSON object on one line, then the connection closes.
struct ControlResponse: Codable, Sendable {
    var ok: Bool
    var status: SimulatorStatus?
    /// The bearer address after `connect`.
    var address: String?
    var error: String?
    var errorKind: FailureKind?
}

/// Client side of the control socket (`sim status`, `sim bearer …`). Blocking; any thread.
enum ControlClient {
    /// Sends `request` to the daemon listening at `socketPath` and returns its response;
    /// throws `.unavailable` when nobody answers.
    static func send(
        _ request: ControlRequest, to socketPath: String, timeoutSeconds: Int = 15
    ) throws -> ControlResponse {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CellpathError(.unavailable, "socket: \(SystemError.text(errno))") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard UnixSocketAddress.connect(fd, path: socketPath) == 0 else {
            throw CellpathError(
                .unavailable, "the simulator daemon does not answer on \(socketPath): \(SystemError.text(errno))",
                hint: "is the world up? (cellpath sim status)")
        }
        var line = try JSONEncoding.encode(request)
        line.append(0x0a)
        guard (try? IO.sendAll(fd, line)) != nil else {
            throw CellpathError(.unavailable, "cannot talk to the simulator daemon")
        }
        guard let answer = LineIO.readLine(fd, limit: 1 << 20) else {
            throw CellpathError(.unavailable, "the simulator daemon closed the control connection without answering")
        }
        do {
            return try JSONDecoding.decode(ControlResponse.self, from: Array(answer))
        } catch {
            throw CellpathError(.internalError, "unreadable answer from the simulator daemon: \(error)")
        }
    }
}

/// sockaddr_un handling. Any thread.
enum UnixSocketAddress {
    /// Calls `connect` (or `bind` when `bind` is true) on `fd` with the unix socket `path`.
    static func connect(_ fd: Int32, path: String, bind: Bool = false) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { errno = ENAMETOOLONG; return -1 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind
                    ? Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    : Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}

/// Whole-line reads on blocking sockets. Any thread.
enum LineIO {
    /// Reads up to the first newline (excluded) or the end; nil on error or an empty stream.
    static func readLine(_ fd: Int32, limit: Int) -> [UInt8]? {
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while line.count < limit {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { return line.isEmpty ? nil : line }
            if let newline = buffer[0 ..< n].firstIndex(of: 0x0a) {
                line.append(contentsOf: buffer[0 ..< newline])
                return line
            }
            line.append(contentsOf: buffer[0 ..< n])
        }
        return nil
    }
}
