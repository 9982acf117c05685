import CMicroHTTPD
import Synchronization

/// A request whose connection libmicrohttpd holds suspended while its async handler runs: the
/// handler's task hands the answer over and resumes the connection, and libmicrohttpd's event
/// thread then calls the access handler again, which sends it. Safe to use from any thread.
final class SuspendedRequest: Sendable {
    /// What the connection gets once resumed.
    enum Answer: Sendable {
        case respond(HTTPResponse)
        /// The connection is closed without an answer (the server is stopping).
        case close
    }

    /// The suspended `MHD_Connection`, as an address: valid until it is resumed and answered.
    private let connection: UInt
    private let stored = Mutex<Answer?>(nil)

    /// Wraps `connection`, which the caller suspends right after (and before handing this over).
    init(_ connection: OpaquePointer) { self.connection = UInt(bitPattern: connection) }

    /// Stores `answer` and resumes the connection. Called once per request, from any thread.
    func resume(with answer: Answer) {
        stored.withLock { $0 = answer }
        guard let pointer = OpaquePointer(bitPattern: connection) else { return }
        MHD_resume_connection(pointer)
    }

    /// The answer handed over, or nil while the handler still runs.
    var answer: Answer? { stored.withLock { $0 } }
}
