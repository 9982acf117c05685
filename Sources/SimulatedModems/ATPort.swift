import Glibc
import SimulatorScenario
import Synchronization
import SystemSupport

/// What a simulated AT port answers: a table from command name to handler. A line `AT<name>`,
/// `AT<name>=<arguments>` or `AT<name>?` goes to the handler of `<name>` (upper-cased; `""` is
/// the bare `AT`); a name not in the table is answered `ERROR`. Other behaviours (FCC unlock
/// commands) register their own handlers with `register`.
public struct ATCommandTable: Sendable {
    /// A handler's answer: the information lines before `OK`, or `ERROR`.
    public enum Reply: Sendable, Equatable {
        case ok([String])
        case error
    }

    /// Called with what follows the name (`=1,2`, `?`, or empty).
    public typealias Handler = @Sendable (_ arguments: String) -> Reply

    private var handlers: [String: Handler] = [:]

    public init() {}

    /// Answers `AT<name>…` with `handler` (replacing an earlier handler of `name`).
    public mutating func register(_ name: String, _ handler: @escaping Handler) {
        handlers[name.uppercased()] = handler
    }

    /// The reply to one command line (without its `\r`).
    public func reply(to line: String) -> Reply {
        let text = line.trimmingWhitespace
        guard text.uppercased().hasPrefix("AT") else { return .error }
        let body = String(text.dropFirst(2))
        if let handler = handlers[body.uppercased()] { return handler("") }
        let nameEnd = body.firstIndex { $0 == "=" || $0 == "?" } ?? body.endIndex
        guard let handler = handlers[body[..<nameEnd].uppercased()] else { return .error }
        return handler(String(body[nameEnd...]))
    }

    /// The identity commands, answered from `modem`: `AT`, `ATI`, `AT+CGMI`/`+GMI`,
    /// `AT+CGMM`/`+GMM`, `AT+CGSN`/`+GSN`, `AT+CGMR`/`+GMR`, and the settings ModemManager
    /// sends while probing (`ATE0`, `ATV1`, `AT+CMEE=…`, `ATZ`) accepted without effect.
    public static func standard(for modem: SimulatedModem) -> ATCommandTable {
        var table = ATCommandTable()
        for name in ["", "E0", "E1", "V1", "Z", "+CMEE"] { table.register(name) { _ in .ok([]) } }
        let answers = [
            ("+CGMI", modem.manufacturer), ("+GMI", modem.manufacturer), ("+CGMM", modem.model),
            ("+GMM", modem.model), ("+CGSN", modem.imei), ("+GSN", modem.imei),
            ("+CGMR", modem.firmware), ("+GMR", modem.firmware)
        ]
        for (name, answer) in answers {
            table.register(name) { arguments in arguments.isEmpty ? .ok([answer]) : .error }
        }
        let identity = [modem.manufacturer, modem.model, "Revision: \(modem.firmware)"]
        table.register("I") { arguments in arguments.isEmpty ? .ok(identity) : .error }
        return table
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

/// A WWAN port other than the control port, on its own pseudo-terminal and thread: an AT port
/// answering from its command table, or (without a table) a port that takes what clients write
/// and answers nothing (the L850's XMM RPC port). `<run dir>/dev/<name>` links to its pty slave.
final class AuxiliaryPort: Sendable {
    let name: String
    let devicePath: String
    private let commands: ATCommandTable?
    private let running = Mutex<(thread: pthread_t, wakeWrite: Int32)?>(nil)

    init(name: String, devicePath: String, commands: ATCommandTable?) {
        self.name = name
        self.devicePath = devicePath
        self.commands = commands
    }

    /// Opens the pty, links the device node to it and starts serving.
    func start() throws(ModemDeviceError) {
        let pty = try PseudoTerminal()
        let pipe: (read: Int32, write: Int32)
        do {
            let p = try FileDescriptor.pipe(nonBlocking: true)
            pipe = (p.read.release(), p.write.release())
        } catch {
            pty.close()
            throw .system("pipe", error.code)
        }
        unlink(devicePath)
        guard symlink(pty.slavePath, devicePath) == 0 else {
            let e = errno
            pty.close(); close(pipe.read); close(pipe.write)
            throw .system("symlink \(devicePath)", e)
        }
        let server = AuxiliaryPortServer(pty: pty, wakeRead: pipe.read, commands: commands)
        do {
            let thread = try Threads.start { server.run() }
            running.withLock { $0 = (thread, pipe.write) }
        } catch {
            unlink(devicePath)
            pty.close(); close(pipe.read); close(pipe.write)
            throw .system("pthread_create", error.code)
        }
    }

    /// Stops serving, closes the pty and removes the device node. Idempotent.
    func stop() {
        guard
            let (thread, wakeWrite) = running.withLock({ r in
                defer { r = nil }; return r
            })
        else { return }
        var one: UInt8 = 1
        _ = write(wakeWrite, &one, 1)
        pthread_join(thread, nil)
        close(wakeWrite)
        unlink(devicePath)
    }
}

/// The poll loop of one auxiliary port.
private final class AuxiliaryPortServer {
    private let pty: PseudoTerminal
    private let wakeRead: Int32
    private let commands: ATCommandTable?
    private let watch: ClientWatch
    private var line: [UInt8] = []

    init(pty: PseudoTerminal, wakeRead: Int32, commands: ATCommandTable?) {
        self.pty = pty
        self.wakeRead = wakeRead
        self.commands = commands
        watch = ClientWatch(path: pty.slavePath, ownDescriptor: pty.slave)
    }

    func run() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var fds = [
                pollfd(fd: pty.master, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                pollfd(fd: watch.fd, events: Int16(POLLIN), revents: 0)
            ]
            if poll(&fds, nfds_t(fds.count), -1) < 0 && errno != EINTR { break }
            if fds[1].revents != 0 { break }
            if watch.drain() {
                // The last client left: what it did not read or finish goes with it.
                line = []
                _ = tcflush(pty.slave, TCIFLUSH)
            }
            guard fds[0].revents & Int16(POLLIN) != 0 else { continue }
            let n = read(pty.master, &buffer, buffer.count)
            guard n > 0, let commands else { continue }
            for byte in buffer[..<n] { take(byte, commands) }
        }
        watch.close()
        pty.close()
        close(wakeRead)
    }

    /// Collects a command line; a `\r` (or `\n`) ends it and sends its reply.
    private func take(_ byte: UInt8, _ commands: ATCommandTable) {
        guard byte == 0x0d || byte == 0x0a else {
            if line.count < 1024 { line.append(byte) }
            return
        }
        defer { line = [] }
        let text = String(decoding: line, as: UTF8.self)
        guard !text.allSatisfy({ $0.isWhitespace }) else { return }
        let reply: String =
            switch commands.reply(to: text) {
            case .ok(let lines): (lines.isEmpty ? "" : "\r\n" + lines.joined(separator: "\r\n") + "\r\n") + "\r\nOK\r\n"
            case .error: "\r\nERROR\r\n"
            }
        let bytes = Array(reply.utf8)
        _ = bytes.withUnsafeBytes { write(pty.master, $0.baseAddress, $0.count) }
    }
}
