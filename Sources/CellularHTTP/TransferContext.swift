import CCurl
import CShims
import Glibc
import Synchronization

/// State shared between one chain and libcurl/c-ares callbacks. Callbacks run on the chain's
/// thread; only `cancel()` is called from elsewhere.
final class TransferContext: @unchecked Sendable {
    /// A socket that could not be bound to the cellular path: the step that failed and errno.
    struct BindFailure: Equatable {
        var step: cshims_bind_result
        var errno: Int32
    }

    private let flag = Atomic<Bool>(false)
    /// The chain's multi handle: it owns the connection cache, and `cancel()` wakes it up.
    let multi: UnsafeMutableRawPointer?
    /// True once `closeConnections()` released the multi handle; guards `cancel()` against it.
    private let released = Mutex<Bool>(false)
    /// Sockets curl is done with, closed in order by `closeConnections()` (CURLOPT_CLOSESOCKETDATA).
    let closingSockets: UnsafeMutablePointer<[Int32]>
    let interfaceName: UnsafeMutablePointer<CChar>
    let ipv4: UnsafeMutablePointer<CChar>?
    let ipv6: UnsafeMutablePointer<CChar>?

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

    init(interfaceName: String, ipv4: String?, ipv6: String?) {
        self.interfaceName = strdup(interfaceName)
        self.ipv4 = ipv4.map { strdup($0) }
        self.ipv6 = ipv6.map { strdup($0) }
        self.multi = curl_multi_init()
        closingSockets = .allocate(capacity: 1)
        closingSockets.initialize(to: [])
    }

    deinit {
        closeConnections()
        closingSockets.deinitialize(count: 1)
        closingSockets.deallocate()
        free(interfaceName)
        free(ipv4)
        free(ipv6)
    }

    /// Asks the running transfer or lookup to stop; safe from any thread.
    func cancel() {
        flag.store(true, ordering: .relaxed)
        released.withLock { released in
            if !released, let multi { curl_multi_wakeup(multi) }
        }
    }

    /// Closes every connection of the chain without a leak and releases the multi handle: at
    /// once where the kernel's own replies follow the bearer (`KernelRoute`), otherwise in order
    /// (see `cshims_close_draining`, one round trip, at most 500 ms for all together). Call on the
    /// chain's thread once the chain is over, so that the process cannot exit before the peers
    /// have closed.
    func closeConnections() {
        released.withLock { released in
            guard !released else { return }
            if let multi { curl_multi_cleanup(multi) }
            released = true
        }
        var draining: [Int32] = []
        for fd in closingSockets.pointee {
            if KernelRoute.repliesFollowBinding(of: fd) { close(fd) } else { draining.append(fd) }
        }
        closingSockets.pointee = []
        draining.withUnsafeBufferPointer { cshims_close_draining($0.baseAddress, Int32($0.count), 500) }
    }

    var isCancelled: Bool { flag.load(ordering: .relaxed) }

    /// Clears what one hop collected.
    func resetHop() {
        body.removeAll(keepingCapacity: true)
        bodyBytes = 0
        statusLine = ""
        headers = []
        requestHeaders = []
        tlsVersion = nil
        bindFailure = nil
        resolveAttempted = false
    }

    /// Binds `fd` to the cellular path; records the failure and returns false when it fails.
    func bind(_ fd: Int32) -> Bool {
        var err: Int32 = 0
        let r = cshims_bind_socket(fd, interfaceName, ipv4, ipv6, &err)
        if r == CSHIMS_BIND_OK { return true }
        bindFailure = BindFailure(step: r, errno: err)
        return false
    }

    var unmanaged: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ p: UnsafeMutableRawPointer?) -> TransferContext {
        Unmanaged<TransferContext>.fromOpaque(p!).takeUnretainedValue()
    }
}

extension TransferContext.BindFailure {
    /// The failure as a fetch failure: a refused device bind, a missing interface, a gone address.
    func failure(interface: String, hop: Int?) -> FetchFailure {
        let reason = String(cString: strerror(errno))
        switch step {
        case CSHIMS_BIND_DEVICE_FAILED where errno == ENODEV:
            return FetchFailure(.noSuchInterface, "interface \(interface) does not exist (SO_BINDTODEVICE: \(reason))", hop: hop)
        case CSHIMS_BIND_DEVICE_FAILED:
            return FetchFailure(.bindRefused, "couldn't bind a socket to \(interface): SO_BINDTODEVICE: \(reason)",
                                hint: "cellpath needs to bind sockets to the modem's interface; nothing was sent", hop: hop)
        case CSHIMS_BIND_VERIFY_FAILED:
            return FetchFailure(.bindRefused, "couldn't bind a socket to \(interface): the kernel does not report the device binding",
                                hint: "nothing was sent", hop: hop)
        case CSHIMS_BIND_NO_ADDRESS:
            return FetchFailure(.noAddress, "\(interface) has no address of the family this hop needs", hop: hop)
        case CSHIMS_BIND_ADDRESS_FAILED where errno == EADDRNOTAVAIL:
            return FetchFailure(.addressGone, "the bearer address is no longer on \(interface)", hop: hop)
        case CSHIMS_BIND_ADDRESS_FAILED:
            return FetchFailure(.bindRefused, "couldn't bind a socket to the bearer address on \(interface): \(reason)", hop: hop)
        default:
            return FetchFailure(.internalError, "couldn't bind a socket: unknown socket family", hop: hop)
        }
    }
}

// MARK: libcurl callbacks (run on the chain's thread, inside curl_easy_perform)

/// CURLOPT_SOCKOPTFUNCTION: binds every socket curl opens; any failure aborts the transfer.
let curlSockoptCallback: curl_sockopt_callback = { clientp, fd, _ in
    TransferContext.from(clientp).bind(fd) ? Int32(CURL_SOCKOPT_OK) : Int32(CURL_SOCKOPT_ERROR)
}

/// CURLOPT_CLOSESOCKETFUNCTION: keeps the socket for `TransferContext.closeConnections()`, which
/// closes all of them in order. Closing at once would let the peer's TLS close_notify reach a closed
/// socket, and the kernel's RST for it loses the device binding and leaves through Wi-Fi.
let curlCloseSocketCallback: curl_closesocket_callback = { clientp, fd in
    clientp!.assumingMemoryBound(to: [Int32].self).pointee.append(fd)
    return 0
}

/// CURLOPT_RESOLVER_START_FUNCTION: curl may only resolve address literals itself; a name not
/// pinned with CURLOPT_RESOLVE would go through getaddrinfo and the default route, so abort.
let curlResolverStartCallback: curl_resolver_start_callback = { _, _, userdata in
    let ctx = TransferContext.from(userdata)
    if ctx.allowCurlResolve { return 0 }
    ctx.resolveAttempted = true
    return 1
}

/// CURLOPT_XFERINFOFUNCTION: aborts the transfer when the chain is cancelled.
let curlXferinfoCallback: curl_xferinfo_callback = { clientp, _, _, _, _ in
    TransferContext.from(clientp).isCancelled ? 1 : 0
}

/// CURLOPT_WRITEFUNCTION: keeps up to the cap, counts everything.
let curlWriteCallback: cp_curl_data_callback = { data, size, count, userdata in
    let ctx = TransferContext.from(userdata)
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
    let ctx = TransferContext.from(userdata)
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
    let ctx = TransferContext.from(userdata)
    guard let data else { return 0 }
    if type == CURLINFO_TEXT {
        let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
        if let r = text.firstRange(of: "SSL connection using ") {
            ctx.tlsVersion = text[r.upperBound...].split(separator: " ").first.map(String.init)
        }
    } else if type == CURLINFO_HEADER_OUT {
        let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
        for line in text.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            ctx.requestHeaders.append(HTTPHeader(String(line[..<colon]), String(value)))
        }
    }
    return 0
}

extension String {
    /// The string without trailing characters matching `predicate`.
    func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var s = Substring(self)
        while let last = s.last, predicate(last) { s.removeLast() }
        return String(s)
    }
}
