import CCurl
import CShims
import Glibc
import SystemSupport

/// What one transfer's libcurl and c-ares callbacks read and fill in: the socket binding, the
/// response being received, the sockets curl is done with. Confined to the transfer's thread;
/// the callbacks reach it through an unretained pointer that its `CurlTransfer` keeps alive.
final class TransferState {
    /// A socket that could not be bound to the cellular path: the step that failed and errno.
    struct BindFailure: Equatable {
        /// Nil when the socket was bound but could not be kept (no descriptor left for its duplicate).
        var step: cshims_bind_result?
        var errno: Int32
    }

    /// The current request's cancellation (`CurlTransfer.reuse` replaces it).
    var cancellation: TransferCancellation
    /// Device and bearer addresses every socket is bound to; nil on the default network.
    private let bindInterface: UnsafeMutablePointer<CChar>?
    private let bindIPv4: UnsafeMutablePointer<CChar>?
    private let bindIPv6: UnsafeMutablePointer<CChar>?

    var bindFailure: BindFailure?
    var resolveAttempted = false
    var allowCurlResolve = false
    var bodyCap = 1 << 20
    var body: [UInt8] = []
    var bodyBytes = 0
    var statusLine = ""
    var headers: [HTTPHeader] = []
    var requestHeaders: [HTTPHeader] = []
    var tlsVersion: String?
    /// Run once by the prereq callback, when the connection is up and before the request is
    /// written (the late headers); false aborts the transfer.
    var beforeRequest: (() -> Bool)?
    /// Every socket bound for the transfer, as a duplicate descriptor of its own, closed by
    /// `CurlTransfer.close()`: curl and c-ares close their descriptors when they like (curl even
    /// closes a connect in progress without CURLOPT_CLOSESOCKETFUNCTION), and the socket lives on
    /// until then, so that its peer's late packets still find it.
    var keptSockets: [Int32] = []
    /// The kept duplicate of each socket curl or c-ares has open, by their descriptor.
    var keeperOf: [Int32: Int32] = [:]
    /// DNS response codes of the answers read during the current lookup.
    var dnsResponseCodes: Set<UInt8> = []
    /// The kept sockets of c-ares, each with the answers still due on it (queries sent minus
    /// answers read; what counts on a datagram socket).
    var awaitedAnswers: [Int32: Int] = [:]

    /// Whether sockets of the family can be bound (the path has an address of it).
    var bindsIPv4: Bool { bindIPv4 != nil }
    var bindsIPv6: Bool { bindIPv6 != nil }

    /// State for a transfer on `route`, whose sockets bind to the path's addresses `ipv4`/`ipv6`.
    init(route: NetworkRoute, ipv4: String?, ipv6: String?, cancellation: TransferCancellation) {
        self.cancellation = cancellation
        if case .bound(let path) = route {
            bindInterface = strdup(path.interfaceName)
            bindIPv4 = ipv4.map { strdup($0) }
            bindIPv6 = ipv6.map { strdup($0) }
        } else {
            bindInterface = nil
            bindIPv4 = nil
            bindIPv6 = nil
        }
    }

    deinit {
        free(bindInterface)
        free(bindIPv4)
        free(bindIPv6)
    }

    /// Clears what one hop collected.
    func resetHop() {
        body.removeAll(keepingCapacity: true)
        bodyBytes = 0
        statusLine = ""
        headers = []
        requestHeaders = []
        tlsVersion = nil
        beforeRequest = nil
        bindFailure = nil
        resolveAttempted = false
    }

    /// Binds `fd` to the cellular path and keeps a duplicate of it (`keptSockets`); records the
    /// failure and returns false when either fails. On the default network there is nothing to bind.
    func bind(_ fd: Int32) -> Bool {
        guard let bindInterface else { return true }
        var err: Int32 = 0
        let r = cshims_bind_socket(fd, bindInterface, bindIPv4, bindIPv6, &err)
        guard r == CSHIMS_BIND_OK else {
            bindFailure = BindFailure(step: r, errno: err)
            return false
        }
        let keeper = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard keeper >= 0 else {
            bindFailure = BindFailure(step: nil, errno: errno)
            return false
        }
        keptSockets.append(keeper)
        keeperOf[fd] = keeper
        BoundSockets.add(keeper)
        return true
    }

    /// Closes curl's or c-ares's descriptor `fd`; a bound socket lives on through its keeper.
    func closeSocket(_ fd: Int32) -> Int32 {
        keeperOf[fd] = nil
        return Glibc.close(fd)
    }

    /// Counts `change` (+1 a query sent, -1 an answer read) on the answers due on c-ares's socket `fd`.
    func countDNSMessage(on fd: Int32, _ change: Int) {
        guard let keeper = keeperOf[fd] else { return }
        awaitedAnswers[keeper] = max(0, awaitedAnswers[keeper, default: 0] + change)
    }

    /// The last response header named `name` (case-insensitive).
    func header(_ name: String) -> String? {
        headers.last { $0.name.lowercased() == name }?.value
    }

    var unretained: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ p: UnsafeMutableRawPointer?) -> TransferState {
        Unmanaged<TransferState>.fromOpaque(p!).takeUnretainedValue()
    }
}

extension TransferState.BindFailure {
    /// The failure as a fetch failure: a refused device bind, a missing interface, a gone address.
    func failure(interface: String, hop: Int?) -> FetchFailure {
        let reason = SystemError.text(errno)
        switch step {
        case nil:
            return FetchFailure(
                .internalError, "couldn't keep a socket bound to \(interface) open for a safe close: \(reason)",
                hop: hop)
        case CSHIMS_BIND_DEVICE_FAILED where errno == ENODEV:
            return FetchFailure(
                .noSuchInterface, "interface \(interface) does not exist (SO_BINDTODEVICE: \(reason))", hop: hop)
        case CSHIMS_BIND_DEVICE_FAILED:
            return FetchFailure(
                .bindRefused, "couldn't bind a socket to \(interface): SO_BINDTODEVICE: \(reason)",
                hint: "cellpath needs to bind sockets to the modem's interface; nothing was sent", hop: hop)
        case CSHIMS_BIND_VERIFY_FAILED:
            return FetchFailure(
                .bindRefused, "couldn't bind a socket to \(interface): the kernel does not report the device binding",
                hint: "nothing was sent", hop: hop)
        case CSHIMS_BIND_NO_ADDRESS:
            return FetchFailure(.noAddress, "\(interface) has no address of the family this hop needs", hop: hop)
        case CSHIMS_BIND_ADDRESS_FAILED where errno == EADDRNOTAVAIL:
            return FetchFailure(.addressGone, "the bearer address is no longer on \(interface)", hop: hop)
        case CSHIMS_BIND_ADDRESS_FAILED:
            return FetchFailure(
                .bindRefused, "couldn't bind a socket to the bearer address on \(interface): \(reason)", hop: hop)
        default:
            return FetchFailure(.internalError, "couldn't bind a socket: unknown socket family", hop: hop)
        }
    }
}

// MARK: libcurl callbacks (run on the transfer's thread, from inside libcurl calls)

/// CURLOPT_SOCKOPTFUNCTION: binds every socket curl opens; any failure aborts the transfer.
let curlSockoptCallback: curl_sockopt_callback = { clientp, fd, _ in
    TransferState.from(clientp).bind(fd) ? Int32(CURL_SOCKOPT_OK) : Int32(CURL_SOCKOPT_ERROR)
}

/// CURLOPT_CLOSESOCKETFUNCTION: closes curl's descriptor; the socket itself lives on through its
/// keeper until `CurlTransfer.close()` closes them all in order. Closing it at once would let the
/// peer's TLS close_notify reach a closed socket, and the kernel's RST for it loses the device
/// binding and leaves through Wi-Fi.
let curlCloseSocketCallback: curl_closesocket_callback = { clientp, fd in
    TransferState.from(clientp).closeSocket(fd)
}

/// CURLOPT_RESOLVER_START_FUNCTION: curl may only resolve address literals itself; a name not
/// pinned with CURLOPT_RESOLVE would go through getaddrinfo and the default route, so abort.
let curlResolverStartCallback: curl_resolver_start_callback = { _, _, userdata in
    let ctx = TransferState.from(userdata)
    if ctx.allowCurlResolve { return 0 }
    ctx.resolveAttempted = true
    return 1
}

/// CURLOPT_PREREQFUNCTION: the connection is up and the request not written yet.
let curlPrereqCallback: curl_prereq_callback = { clientp, _, _, _, _ in
    let ctx = TransferState.from(clientp)
    guard let beforeRequest = ctx.beforeRequest else { return CURL_PREREQFUNC_OK }
    ctx.beforeRequest = nil
    return beforeRequest() ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT
}

/// CURLOPT_XFERINFOFUNCTION: aborts the transfer when it is cancelled.
let curlXferinfoCallback: curl_xferinfo_callback = { clientp, _, _, _, _ in
    TransferState.from(clientp).cancellation.isCancelled ? 1 : 0
}

/// CURLOPT_WRITEFUNCTION: keeps up to the cap, counts everything.
let curlWriteCallback: cp_curl_data_callback = { data, size, count, userdata in
    let ctx = TransferState.from(userdata)
    let n = size * count
    if let data, n > 0 {
        let room = max(0, ctx.bodyCap - ctx.body.count)
        if room > 0 {
            let buffer = UnsafeRawBufferPointer(start: data, count: min(n, room))
            ctx.body.append(contentsOf: buffer)
        }
        ctx.bodyBytes += n
    }
    return n
}

/// CURLOPT_HEADERFUNCTION: collects the last response's status line and headers.
let curlHeaderCallback: cp_curl_data_callback = { data, size, count, userdata in
    let ctx = TransferState.from(userdata)
    let n = size * count
    guard let data else { return n }
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: n), as: UTF8.self)
        .trimmingSuffix(while: { $0.isNewline || $0 == " " })
    if line.hasPrefix("HTTP/") {
        ctx.statusLine = line
        ctx.headers = []
    } else if let colon = line.firstIndex(of: ":") {
        let name = String(line[..<colon])
        let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
        ctx.headers.append(HTTPHeader(name, String(value)))
    }
    return n
}

/// CURLOPT_DEBUGFUNCTION: the TLS version of new connections and the request headers sent.
let curlDebugCallback: curl_debug_callback = { _, type, data, size, userdata in
    let ctx = TransferState.from(userdata)
    guard let data else { return 0 }
    if type == CURLINFO_TEXT {
        // curl sends many such lines per request: look for the one wanted in the bytes first.
        let bytes = UnsafeRawBufferPointer(start: data, count: size)
        guard let found = bytes.firstRange(of: tlsVersionMarker) else { return 0 }
        let text = String(decoding: bytes[found.upperBound...], as: UTF8.self)
        ctx.tlsVersion = text.split(separator: " ").first.map(String.init)
    } else if type == CURLINFO_HEADER_OUT {
        // The request line, then one "name: value" line each, split as bytes (cheaper than as text).
        let bytes = UnsafeRawBufferPointer(start: data, count: size)
        var lineStart = 0, sawRequestLine = false
        while lineStart < size {
            var lineEnd = lineStart
            while lineEnd < size && !(bytes[lineEnd] == 13 && lineEnd + 1 < size && bytes[lineEnd + 1] == 10) {
                lineEnd += 1
            }
            let line = bytes[lineStart ..< lineEnd]
            lineStart = lineEnd + 2
            if line.isEmpty { continue }
            if !sawRequestLine {
                sawRequestLine = true
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let value = bytes[(colon + 1) ..< lineEnd].drop { $0 == UInt8(ascii: " ") }
            ctx.requestHeaders.append(
                HTTPHeader(
                    String(decoding: bytes[line.startIndex ..< colon], as: UTF8.self),
                    String(decoding: value, as: UTF8.self)))
        }
    }
    return 0
}

/// What precedes the TLS version in curl's informational text.
private let tlsVersionMarker = Array("SSL connection using ".utf8)

extension UnsafeRawBufferPointer {
    /// The first place where `pattern` (not empty) occurs in these bytes.
    func firstRange(of pattern: [UInt8]) -> Range<Int>? {
        guard let first = pattern.first, count >= pattern.count else { return nil }
        var start = 0
        while start <= count - pattern.count {
            guard let hit = self[start ... (count - pattern.count)].firstIndex(of: first) else { return nil }
            if self[hit ..< (hit + pattern.count)].elementsEqual(pattern) { return hit ..< (hit + pattern.count) }
            start = hit + 1
        }
        return nil
    }
}

extension String {
    /// The string without trailing characters matching `predicate`.
    func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var s = Substring(self)
        while let last = s.last, predicate(last) { s.removeLast() }
        return String(s)
    }
}
