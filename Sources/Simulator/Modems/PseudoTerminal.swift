import CShims
import Glibc

/// A pseudo-terminal pair in raw mode standing in for a cdc-wdm control port: the simulator
/// serves on the master, clients open the slave path, and the simulator keeps its own slave fd
/// open so the master never sees a hang-up between clients.
final class PseudoTerminal {
    let master: Int32
    private(set) var slave: Int32
    let slavePath: String

    init() throws(ModemDeviceError) {
        var m: Int32 = -1, s: Int32 = -1
        var name = [CChar](repeating: 0, count: 128)
        let rc = cshims_pty_open(&m, &s, &name, name.count)
        guard rc == 0 else { throw .system("open pseudo-terminal", rc) }
        master = m
        slave = s
        slavePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Discards bytes written towards clients that nobody read (a client that went away).
    func flushUnread() { _ = tcflush(slave, TCIFLUSH) }

    func close() {
        Glibc.close(master)
        Glibc.close(slave)
    }
}

/// Failures setting up or serving a simulated modem device.
public enum ModemDeviceError: Error, Equatable, CustomStringConvertible {
    case system(String, Int32)
    case alreadyStarted
    public var description: String {
        switch self {
        case .system(let what, let e): return "\(what): \(String(cString: strerror(e)))"
        case .alreadyStarted: return "the simulated modem is already running"
        }
    }
}
