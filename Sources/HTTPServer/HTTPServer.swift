import CMicroHTTPD
import CellpathCore
import Glibc
import Synchronization
import SystemSupport

/// A small HTTP/HTTPS server over libmicrohttpd.
///
/// With a blocking `Handler`, each connection has a thread of its own, so a handler that delays
/// or never answers holds up only its own connection. The handler runs on the connection's
/// thread (never on the Swift concurrency pool) and may be called concurrently for different
/// connections.
///
/// With an `AsyncHandler`, a few event threads (epoll, one per core) serve every connection:
/// a complete request suspends its connection, the handler runs as a task on Swift's
/// cooperative pool, and its task resumes the connection with the response, so no thread waits
/// for a handler. At most `maxRequestsInFlight` such tasks run at once; a request beyond that
/// bound is answered at once with 503 and `Retry-After: 1`, never queued.
public final class HTTPServer: Sendable {
    /// Where the server listens.
    public enum Listener: Sendable, Equatable {
        /// A numeric IPv4 or IPv6 address and a port (0 picks a free port).
        case address(String, port: Int)
        /// A socket that is already bound and listening; the server takes ownership of it
        /// and closes it when it stops (or fails to start).
        case socket(Int32)
    }

    /// A certificate chain and its private key, both PEM.
    public struct TLSIdentity: Sendable, Equatable {
        public var certificatePEM: String
        public var privateKeyPEM: String

        public init(certificatePEM: String, privateKeyPEM: String) {
            self.certificatePEM = certificatePEM
            self.privateKeyPEM = privateKeyPEM
        }

        /// Reads the certificate chain and key from PEM files.
        public static func files(certificate: String, privateKey: String) throws -> TLSIdentity {
            TLSIdentity(
                certificatePEM: try readTextFile(certificate, what: "TLS certificate"),
                privateKeyPEM: try readTextFile(privateKey, what: "TLS private key"))
        }
    }

    /// Bounds on what a client may send or hold; nil leaves libmicrohttpd's default (no body bound).
    public struct Limits: Sendable, Equatable {
        /// Bytes of a request body; a larger one is answered 413 (at once when its
        /// Content-Length says so) and never reaches the handler.
        public var maxBodyBytes: Int?
        /// Bytes of memory per connection for the request line and headers (libmicrohttpd
        /// answers a larger header block with 431).
        public var maxHeaderBytes: Int?
        /// Connections open at once; further ones are closed at accept. With an async handler
        /// each event thread takes an even share of the bound.
        public var maxConnections: Int?
        /// Connections open at once from one client address; further ones are closed at accept.
        public var maxConnectionsPerAddress: Int?
        /// Seconds a connection may stay idle (or a slow client send nothing) before it is closed.
        public var idleTimeoutSeconds: Int?
        /// Seconds a connection has to deliver a whole request (headers and body), counted from
        /// its opening or its previous answer, however steadily it sends; then it is closed.
        public var requestTimeoutSeconds: Int?

        public init(
            maxBodyBytes: Int? = nil, maxHeaderBytes: Int? = nil, maxConnections: Int? = nil,
            maxConnectionsPerAddress: Int? = nil,
            idleTimeoutSeconds: Int? = nil, requestTimeoutSeconds: Int? = nil
        ) {
            self.maxBodyBytes = maxBodyBytes
            self.maxHeaderBytes = maxHeaderBytes
            self.maxConnections = maxConnections
            self.maxConnectionsPerAddress = maxConnectionsPerAddress
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.requestTimeoutSeconds = requestTimeoutSeconds
        }
    }

    /// Computes the response to one request; runs on the connection's thread.
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    /// Computes the response to one request; runs as a task on Swift's cooperative pool, which
    /// `stop()` cancels. A thrown error (cancellation included) answers 500.
    public typealias AsyncHandler = @Sendable (HTTPRequest) async throws -> HTTPResponse

    /// A request the server answered itself, without the handler: a body over the bound (413)
    /// or the async handlers at their bound (503). `request` has no body. Called on the thread
    /// that answered (a connection or event thread); for access logs and metrics.
    public typealias ServerAnswerObserver = @Sendable (_ request: HTTPRequest, _ status: Int) -> Void

    /// The local port the server listens on.
    public let port: Int
    /// Whether the server speaks TLS.
    public let isTLS: Bool
    private let context: ServerContext
    private let daemon: Mutex<OpaquePointer?>

    /// Starts serving on `listener`, with TLS when `tls` is given; `handler` runs on each
    /// connection's thread.
    public convenience init(listener: Listener, tls: TLSIdentity? = nil, handler: @escaping Handler) throws {
        try self.init(listener: listener, tls: tls, responder: .blocking(handler))
    }

    /// Starts serving on `listener`, with TLS when `tls` is given, from event threads; `handler`
    /// runs on the cooperative pool, at most `maxRequestsInFlight` (at least 1) at once, and a
    /// request beyond that bound gets 503 with `Retry-After: 1`. A response's `delivery` delay
    /// counts as in flight.
    public convenience init(
        listener: Listener, tls: TLSIdentity? = nil, limits: Limits = Limits(), maxRequestsInFlight: Int,
        answeredByServer: ServerAnswerObserver? = nil, handler: @escaping AsyncHandler
    ) throws {
        guard maxRequestsInFlight >= 1 else {
            if case .socket(let fd) = listener { close(fd) }
            throw CellpathError(
                .configuration,
                "the HTTP server needs room for at least 1 request in flight, not \(maxRequestsInFlight)")
        }
        try self.init(
            listener: listener, tls: tls,
            responder: .async(handler, InFlightRequests(limit: maxRequestsInFlight)), limits: limits,
            answeredByServer: answeredByServer)
    }

    private init(
        listener: Listener, tls: TLSIdentity?, responder: Responder, limits: Limits = Limits(),
        answeredByServer: ServerAnswerObserver? = nil
    ) throws {
        let fd: Int32
        switch listener {
        case .address(let address, let port): fd = try listeningSocket(address: address, port: port)
        case .socket(let given): fd = given
        }
        // Accepted connections inherit TCP_NODELAY (Linux): without it Nagle holds GnuTLS's second
        // handshake record until the client's ACK, one extra round trip per TLS handshake.
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        guard let localPort = boundPort(of: fd) else {
            close(fd)
            throw CellpathError(.internalError, "HTTP server socket \(fd) is not a bound socket")
        }
        let deadlines: RequestDeadlines?
        do {
            deadlines = try limits.requestTimeoutSeconds.map { seconds throws(SystemError) in
                try RequestDeadlines(limit: .seconds(seconds))
            }
        } catch {
            close(fd)
            throw CellpathError(error)
        }
        let context = ServerContext(
            responder: responder, isTLS: tls != nil, maxBodyBytes: limits.maxBodyBytes,
            deadlines: deadlines, answeredByServer: answeredByServer)
        let perAddressLimit = UInt32(clamping: limits.maxConnectionsPerAddress ?? 0)
        let connectionEvents: MHD_NotifyConnectionCallback? = deadlines == nil ? nil : connectionEvent
        let connectionLimit = UInt32(clamping: limits.maxConnections ?? 0),
            timeout = UInt32(clamping: limits.idleTimeoutSeconds ?? 0)
        let memoryLimit = limits.maxHeaderBytes ?? 0
        let eventThreads: UInt32
        switch responder {
        case .blocking: eventThreads = 0
        case .async:
            eventThreads = Self.eventThreadCount(connectionLimit: connectionLimit)
            // Several event threads wait on the one listening socket: an accept that another won must not block.
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        let cls = Unmanaged.passUnretained(context).toOpaque()
        let started: OpaquePointer?
        if let tls {
            started = tls.certificatePEM.withCString { cert in
                tls.privateKeyPEM.withCString { key in
                    cp_mhd_start(
                        fd, cert, key, targetReceived, accessHandler, cls, requestCompleted, cls, connectionLimit,
                        timeout, memoryLimit, eventThreads,
                        perAddressLimit, connectionEvents)
                }
            }
        } else {
            started = cp_mhd_start(
                fd, nil, nil, targetReceived, accessHandler, cls, requestCompleted, cls, connectionLimit, timeout,
                memoryLimit, eventThreads,
                perAddressLimit, connectionEvents)
        }
        guard let started else {
            deadlines?.stop()
            close(fd)
            throw CellpathError(
                .unavailable, "cannot start the HTTP server on port \(localPort)",
                hint: tls == nil ? nil : "check that the TLS certificate and key are valid PEM and match")
        }
        self.port = localPort
        self.isTLS = tls != nil
        self.context = context
        self.daemon = Mutex(started)
    }

    /// Stops accepting, wakes delayed and unanswered requests and cancels async handlers (the
    /// connections of all these are closed), waits for every connection thread and async
    /// handler to return and closes the listening socket. Idempotent.
    ///
    /// Blocks the calling thread: call it off the cooperative pool when async handlers may be
    /// in flight, since they need the pool to finish.
    public func stop() {
        let running = daemon.withLock { current -> OpaquePointer? in
            let value = current
            current = nil
            return value
        }
        guard let running else { return }
        context.stopSignal.fire()
        if case .async(_, let inFlight) = context.responder {
            // libmicrohttpd must not stop with a connection suspended: every handler's task
            // resumes its connection before it settles.
            inFlight.cancelAll()
            inFlight.waitUntilSettled()
        }
        MHD_stop_daemon(running)
        context.deadlines?.stop()
    }

    /// Event threads for async handlers: one per online core. libmicrohttpd splits
    /// a connection limit evenly among its threads, so a limit below the core count gets fewer.
    private static func eventThreadCount(connectionLimit: UInt32) -> UInt32 {
        let threads = UInt32(clamping: max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        return connectionLimit > 0 ? max(1, min(threads, connectionLimit)) : threads
    }

    deinit { stop() }
}

/// How the server computes its responses.
private enum Responder: Sendable {
    /// On the connection's thread.
    case blocking(HTTPServer.Handler)
    /// As a task on the cooperative pool, within the bound of `InFlightRequests`.
    case async(HTTPServer.AsyncHandler, InFlightRequests)
}

/// Shared between the server object and libmicrohttpd's threads.
private final class ServerContext: Sendable {
    let responder: Responder
    let isTLS: Bool
    let maxBodyBytes: Int?
    let deadlines: RequestDeadlines?
    let answeredByServer: HTTPServer.ServerAnswerObserver?
    let stopSignal = StopSignal()

    init(
        responder: Responder, isTLS: Bool, maxBodyBytes: Int?, deadlines: RequestDeadlines?,
        answeredByServer: HTTPServer.ServerAnswerObserver?
    ) {
        self.responder = responder
        self.isTLS = isTLS
        self.maxBodyBytes = maxBodyBytes
        self.deadlines = deadlines
        self.answeredByServer = answeredByServer
    }

    /// Sends the server's own `response` to the request in `state` and tells the observer.
    func answerItself(
        _ response: HTTPResponse, on connection: OpaquePointer, method: String, state: RequestState
    ) -> MHD_Result {
        deadlines?.requestArrived(connection)
        answeredByServer?(request(on: connection, method: method, state: state, body: []), response.status)
        return send(response, on: connection)
    }

    /// The request on `connection` as the handler sees it, with `body`.
    func request(on connection: OpaquePointer, method: String, state: RequestState, body: [UInt8]) -> HTTPRequest {
        let headers = connectionValues(connection, MHD_ValueKind.HEADER_KIND).map {
            (name: $0.name, value: $0.value ?? "")
        }
        let query = connectionValues(connection, MHD_ValueKind.GET_ARGUMENT_KIND).map {
            HTTPQueryItem(name: $0.name, value: $0.value)
        }
        let (address, port) = peer(of: connection)
        return HTTPRequest(
            method: method, path: state.path, target: state.target, queryItems: query, headers: HTTPHeaders(headers),
            body: body, remoteAddress: address, remotePort: port, isTLS: isTLS)
    }
}

/// One request as it arrives: its target, then its body bytes; owned by libmicrohttpd's
/// per-request pointer.
private final class RequestState {
    /// The request target as received (path and query, not decoded).
    let target: String
    /// The decoded path, as the access handler is given it.
    var path = "/"
    /// Set by the access handler's first call, which sees the headers only.
    var started = false
    var body: [UInt8] = []
    /// Set once the body passed the server's bound: the rest is dropped and 413 answered.
    var bodyTooLarge = false
    /// Set when the connection was suspended for an async handler.
    var suspended: SuspendedRequest?

    init(target: String) { self.target = target }
}

/// libmicrohttpd's URI log callback, called with each request's target before it is parsed: the
/// state it returns becomes the request's per-request pointer.
private func targetReceived(
    _ cls: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?,
    _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    Unmanaged.passRetained(RequestState(target: uri.map { String(cString: $0) } ?? "/")).toOpaque()
}

/// Answered for a body beyond `Limits.maxBodyBytes`.
private let bodyTooLargeResponse = HTTPResponse(
    status: 413, contentType: "application/json",
    body: #"{"error_message":"the request body is too large"}"#, headers: ["Connection": "close"])

/// Answered for a request whose framing `RequestFraming` refuses; the connection is closed, so
/// that nothing after the request is read as another one.
private func badFramingResponse(_ problem: String) -> HTTPResponse {
    HTTPResponse(
        status: 400, contentType: "application/json",
        body: JSONValue.object([("error_message", .string("the request is malformed: \(problem)"))]).serialized,
        headers: ["Connection": "close"])
}

/// Collects the key/value pairs libmicrohttpd iterates over.
private final class FieldCollector {
    var fields: [(name: String, value: String?)] = []
}

private func collectField(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let collector = Unmanaged<FieldCollector>.fromOpaque(cls).takeUnretainedValue()
    collector.fields.append((name: String(cString: key), value: value.map { String(cString: $0) }))
    return .YES
}

private func connectionValues(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [(name: String, value: String?)] {
    let collector = FieldCollector()
    withExtendedLifetime(collector) {
        _ = MHD_get_connection_values(connection, kind, collectField, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.fields
}

/// libmicrohttpd's access handler: accumulates the upload, then has the Swift handler answer
/// once the request is complete. Runs on the connection's thread (blocking handler) or on an
/// event thread (async handler), where it is called once more when the connection is resumed.
private func accessHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ url: UnsafePointer<CChar>?, _ method: UnsafePointer<CChar>?,
    _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
    _ uploadSize: UnsafeMutablePointer<Int>?,
    _ perRequest: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let perRequest else { return .NO }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    if perRequest.pointee == nil {
        perRequest.pointee = Unmanaged.passRetained(RequestState(target: url.map { String(cString: $0) } ?? "/"))
            .toOpaque()
    }
    guard let stored = perRequest.pointee else { return .NO }
    let state = Unmanaged<RequestState>.fromOpaque(stored).takeUnretainedValue()
    let methodName = method.map { String(cString: $0) } ?? "GET"
    if !state.started {
        state.started = true
        state.path = url.map { String(cString: $0) } ?? "/"
        let headers = connectionValues(connection, MHD_ValueKind.HEADER_KIND).map {
            (name: $0.name, value: $0.value ?? "")
        }
        if let problem = RequestFraming.problem(version: version.map { String(cString: $0) } ?? "", headers: headers) {
            return context.answerItself(badFramingResponse(problem), on: connection, method: methodName, state: state)
        }
        if let limit = context.maxBodyBytes,
            let declared = MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, "Content-Length").flatMap(
                { Int(String(cString: $0)) }),
            declared > limit
        {
            return context.answerItself(bodyTooLargeResponse, on: connection, method: methodName, state: state)
        }
        return .YES
    }
    if let uploadSize, uploadSize.pointee > 0 {
        if let limit = context.maxBodyBytes, state.bodyTooLarge || state.body.count + uploadSize.pointee > limit {
            state.bodyTooLarge = true
            state.body = []
        } else if let uploadData {
            uploadData.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
            }
        }
        uploadSize.pointee = 0
        return .YES
    }
    if let suspended = state.suspended {
        // Resumed by the handler's task: answer, unless the server is stopping.
        guard case .respond(let response) = suspended.answer, !context.stopSignal.hasFired else { return .NO }
        return send(response, on: connection)
    }
    if state.bodyTooLarge {
        return context.answerItself(bodyTooLargeResponse, on: connection, method: methodName, state: state)
    }
    context.deadlines?.requestArrived(connection)
    let request = context.request(on: connection, method: methodName, state: state, body: state.body)
    switch context.responder {
    case .blocking(let handler):
        return deliver(handler(request), on: connection, context)
    case .async(let handler, let inFlight):
        let suspended = SuspendedRequest(connection)
        state.suspended = suspended
        MHD_suspend_connection(connection)
        start(handler, for: request, within: inFlight, resuming: suspended, context)
        return .YES
    }
}

/// Answered when the async handlers in flight are at their bound.
private let busyResponse = HTTPResponse(
    status: 503, contentType: "text/plain",
    body: "too many requests in flight, retry later\n", headers: ["Retry-After": "1"])

/// Answered when an async handler throws.
private let handlerFailedResponse = HTTPResponse(
    status: 500, contentType: "text/plain", body: "internal server error\n")

/// Runs `handler` as a task that resumes the suspended connection with its response, after
/// the response's delivery delay (`never`: once the server stops, with no answer); at the
/// in-flight bound, resumes it at once with 503. Runs on an event thread.
private func start(
    _ handler: @escaping HTTPServer.AsyncHandler, for request: HTTPRequest, within inFlight: InFlightRequests,
    resuming suspended: SuspendedRequest, _ context: ServerContext
) {
    do throws(InFlightRequests.Refusal) {
        try inFlight.start(
            { () async -> SuspendedRequest.Answer in
                let response: HTTPResponse
                do {
                    response = try await handler(request)
                } catch {
                    return .respond(handlerFailedResponse)
                }
                switch response.delivery {
                case .immediately:
                    return .respond(response)
                case .after(let delay):
                    do {
                        try await Task.sleep(for: delay)
                    } catch {
                        return .close  // cut short by stop()
                    }
                    return .respond(response)
                case .never:
                    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                    return .close
                }
            }, completion: suspended.resume(with:))
    } catch {
        switch error {
        case .atLimit:
            var summary = request
            summary.body = []
            context.answeredByServer?(summary, busyResponse.status)
            suspended.resume(with: .respond(busyResponse))
        case .stopping: suspended.resume(with: .close)
        }
    }
}

/// Sends a blocking handler's `response` when its delivery says so; a stop cuts a delayed or
/// unanswered one off by closing the connection. Runs on the connection's thread.
private func deliver(_ response: HTTPResponse, on connection: OpaquePointer, _ context: ServerContext) -> MHD_Result {
    switch response.delivery {
    case .immediately: break
    case .after(let delay): if context.stopSignal.wait(for: delay) { return .NO }
    case .never:
        context.stopSignal.waitForever()
        return .NO
    }
    return send(response, on: connection)
}

private func send(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
    let made: OpaquePointer? = response.body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(
            bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
            MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
    }
    guard let made else { return .NO }
    defer { MHD_destroy_response(made) }
    for field in response.headers where field.name.lowercased() != "content-length" {
        guard MHD_add_response_header(made, field.name, field.value) == .YES else { return .NO }
    }
    return MHD_queue_response(connection, UInt32(response.status), made)
}

/// Frees the per-request state; called by libmicrohttpd when a request ends in any way.
private func requestCompleted(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ perRequest: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ reason: MHD_RequestTerminationCode
) {
    if let cls, let connection {
        Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().deadlines?.requestEnded(connection)
    }
    guard let perRequest, let stored = perRequest.pointee else { return }
    Unmanaged<RequestState>.fromOpaque(stored).release()
    perRequest.pointee = nil
}

/// Tells the request deadlines when a connection opens and closes; libmicrohttpd calls it on
/// the connection's thread, the close before the socket is closed.
private func connectionEvent(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ event: MHD_ConnectionNotificationCode
) {
    guard let cls, let connection,
        let deadlines = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().deadlines
    else { return }
    if cp_mhd_connection_started(event) != 0 {
        let fd = cp_mhd_connection_fd(connection)
        if fd >= 0 { deadlines.opened(connection, fd: fd) }
    } else {
        deadlines.closed(connection)
    }
}

private func peer(of connection: OpaquePointer) -> (String, Int) {
    guard let address = cp_mhd_client_address(connection) else { return ("", 0) }
    return socketAddressText(address)
}
