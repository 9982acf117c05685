import CShims
import CellpathCore
import Glibc
import SystemSupport

/// A pseudo-terminal pair in raw mode standing in for a cdc-wdm control port: the simulator
/// serves on the master, clients open the slave path, and the simulator keeps its own slave fd
/// open so the master never sees a hang-up between clients.
final class PseudoTerminal: Sendable {
    let master: Int32
    let slave: Int32
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

    func close() {
        Glibc.close(master)
        Glibc.close(slave)
    }
}

/// Failures setting up a simulated modem device; they leave the module as `CellpathError`.
enum ModemDeviceError: Error, Equatable {
    case system(String, Int32)
    case alreadyStarted

    var cellpathError: CellpathError {
        switch self {
        case .system(let what, let e):
            let message = "simulated modem: \(what): \(SystemError.text(e))"
            return e == EACCES || e == EPERM
                ? CellpathError(
                    .permission, message, hint: "run the simulator as root or give it a writable run directory")
                : CellpathError(.unavailable, message)
        case .alreadyStarted:
            return CellpathError(.internalError, "simulated modem: already running")
        }
    }
}
