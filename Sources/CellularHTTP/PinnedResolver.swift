import CAres
import Glibc
import SystemSupport

/// Resolves names with c-ares against the bearer's DNS servers, over sockets bound to the
/// cellular path exactly like curl's (device, verified, bearer address); never falls back.
/// Runs on the transfer's thread; blocks until an answer, a failure or the deadline.
struct PinnedResolver {
    let servers: [String]
    /// The cellular interface, for messages.
    let interfaceName: String
    let state: TransferState
    /// The path's link and addresses: a bearer lost during the lookup fails it at once.
    let watch: PathWatch

    private static let libraryReady: Bool = ares_library_init(ARES_LIB_INIT_ALL) == ARES_SUCCESS
    /// DNS response codes (RFC 1035) that c-ares retries on another server.
    private static let serverFailure: UInt8 = 2, refused: UInt8 = 5

    /// What a lookup found: the addresses, in the DNS's order without repeats, and the
    /// smallest TTL of the records (addresses and CNAMEs) that gave them, in seconds.
    struct Answer: Equatable {
        var addresses: [String]
        var ttl: Int
    }

    /// State of one lookup, filled by its c-ares callback.
    private final class Lookup {
        var callbacks = 0
        var status: Int32 = 0
        var addresses: [String] = []
        var ttl = Int.max
    }

    /// Returns the addresses of `host` of the families `ipType` allows, or the failure.
    /// `budgetMs` bounds the whole lookup; `totalBound` says whether that budget is the chain's.
    func resolve(
        _ host: String, ipType: IPType, budgetMs: Int, totalBound: Bool, hop: Int
    ) throws(FetchFailure) -> Answer {
        guard Self.libraryReady else { throw FetchFailure(.internalError, "couldn't initialise c-ares", hop: hop) }
        guard !servers.isEmpty else {
            throw FetchFailure(
                .dnsUnreachable, "no DNS server for the cellular path to resolve \(host)",
                hint: "pass the bearer's DNS servers (--dns)", hop: hop)
        }
        // A server of a family the path has no address of cannot be asked from it: its socket
        // would fail to bind. The others are asked (either family answers A and AAAA).
        let servers = servers.filter { $0.contains(":") ? state.bindsIPv6 : state.bindsIPv4 }
        guard !servers.isEmpty else {
            throw FetchFailure(
                .dnsUnreachable,
                "no DNS server of the cellular path's address family (\(self.servers.joined(separator: ", "))) to resolve \(host)",
                hint: "give a DNS server of the bearer's family (--dns)", hop: hop)
        }
        let lookup = Lookup()
        state.dnsResponseCodes = []
        try run(lookup, servers: servers, host: host, ipType: ipType, budgetMs: budgetMs, hop: hop)
        // ares_destroy has run: the callback ran exactly once, whatever ended the lookup.
        assert(lookup.callbacks == 1, "c-ares ran the lookup's callback \(lookup.callbacks) times")

        if state.cancellation.isCancelled {
            throw FetchFailure(.cancelled, "cancelled while resolving \(host)", hop: hop)
        }
        if let bind = state.bindFailure { throw bind.failure(interface: interfaceName, hop: hop) }
        let status = lookup.status
        // No answer may be the path going away under the lookup.
        if status != ARES_SUCCESS { try watch.verify(hop: hop) }
        if status == ARES_SUCCESS {
            let unique = lookup.addresses.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            if unique.isEmpty {
                throw FetchFailure(
                    .dnsNoAnswer, "the cellular DNS has no \(ipType.recordName) record for \(host)", hop: hop)
            }
            return Answer(addresses: unique, ttl: max(0, lookup.ttl))
        }
        let list = servers.joined(separator: ", ")
        switch status {
        case ARES_ENOTFOUND:
            throw FetchFailure(
                .dnsNoSuchName, "the cellular DNS (\(list)) says \(host) does not exist (NXDOMAIN)", hop: hop)
        case ARES_ENODATA, ARES_ENONAME:
            throw FetchFailure(
                .dnsNoAnswer, "the cellular DNS (\(list)) has no \(ipType.recordName) record for \(host)", hop: hop)
        case ARES_EBADNAME:
            throw FetchFailure(.malformedURL, "\(host) is not a name DNS can look up", hop: hop)
        case ARES_ECANCELLED where totalBound:
            throw FetchFailure(.totalTimeout, "the chain's time ran out while resolving \(host)", hop: hop)
        // c-ares tries the next server after REFUSED or SERVFAIL, then reports ECONNREFUSED;
        // the answers' response codes tell them from a server that is not there.
        case ARES_ECONNREFUSED where state.dnsResponseCodes.contains(Self.refused):
            throw FetchFailure(
                .dnsRefused, "the cellular DNS (\(list)) refused to resolve \(host) (REFUSED)",
                hint: "check that these are the bearer's DNS servers", hop: hop)
        case ARES_ECONNREFUSED where state.dnsResponseCodes.contains(Self.serverFailure):
            throw FetchFailure(.dnsFailure, "the cellular DNS (\(list)) failed to resolve \(host) (SERVFAIL)", hop: hop)
        case ARES_ECANCELLED, ARES_ETIMEOUT, ARES_ECONNREFUSED:
            throw FetchFailure(
                .dnsUnreachable, "no answer from the cellular DNS (\(list)) for \(host)",
                hint: "check the bearer's DNS servers and that the bearer is connected", hop: hop)
        default:
            throw FetchFailure(
                .dnsFailure,
                "the cellular DNS (\(list)) failed to resolve \(host): \(String(cString: ares_strerror(status)))",
                hop: hop)
        }
    }

    /// Runs one lookup on its own channel until its callback ran, then destroys the channel.
    /// c-ares holds an unretained pointer to `lookup` until `ares_destroy` (which would run the
    /// callback of a lookup still pending); the caller's reference keeps it alive past that.
    private func run(
        _ lookup: Lookup, servers: [String], host: String, ipType: IPType, budgetMs: Int, hop: Int
    ) throws(FetchFailure) {
        var channel: ares_channel?
        guard cp_ares_init(&channel, 1000, 2) == ARES_SUCCESS, let channel else {
            throw FetchFailure(.internalError, "couldn't create a c-ares channel", hop: hop)
        }
        defer { ares_destroy(channel) }
        guard ares_set_servers_ports_csv(channel, servers.joined(separator: ",")) == ARES_SUCCESS else {
            throw FetchFailure(
                .invalidDNSServer, "invalid DNS server list \(servers.joined(separator: ",")): expected IP addresses",
                hop: hop)
        }
        ares_set_socket_functions(channel, Self.socketFunctions, state.unretained)
        ares_set_socket_configure_callback(
            channel,
            { fd, _, data in
                TransferState.from(data).bind(fd) ? 0 : -1
            }, state.unretained)

        var hints = ares_addrinfo_hints()
        hints.ai_flags = ARES_AI_NOSORT
        switch ipType {
        case .ipv4: hints.ai_family = AF_INET
        case .ipv6: hints.ai_family = AF_INET6
        case .any: hints.ai_family = AF_UNSPEC
        }
        ares_getaddrinfo(
            channel, host, nil, &hints,
            { arg, status, _, result in
                let lookup = Unmanaged<Lookup>.fromOpaque(arg!).takeUnretainedValue()
                lookup.callbacks += 1
                lookup.status = status
                guard let result else { return }
                var node = result.pointee.nodes
                while let n = node {
                    if let sa = n.pointee.ai_addr, let text = IPAddress.numericHost(sa) {
                        lookup.addresses.append(text)
                        lookup.ttl = min(lookup.ttl, Int(n.pointee.ai_ttl))
                    }
                    node = n.pointee.ai_next
                }
                var cname = result.pointee.cnames
                while let c = cname {
                    lookup.ttl = min(lookup.ttl, Int(c.pointee.ttl))
                    cname = c.pointee.next
                }
                ares_freeaddrinfo(result)
            }, Unmanaged.passUnretained(lookup).toOpaque())

        let deadline = ContinuousClock.now + .milliseconds(budgetMs)
        while lookup.callbacks == 0 {
            if state.cancellation.isCancelled || ContinuousClock.now >= deadline { break }
            let left = deadline - ContinuousClock.now
            let ms = max(1, Int(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            let wakers = [state.cancellation.wakeDescriptor, watch.descriptor]
            cp_ares_step(channel, Int32(clamping: ms), wakers, Int32(wakers.count))
            try watch.check(hop: hop)
        }
        // Ends a lookup still pending with ARES_ECANCELLED (its callback runs now).
        if lookup.callbacks == 0 { ares_cancel(channel) }
    }
}

extension PinnedResolver {
    /// The socket calls of every channel, on the transfer's `TransferState` (the user data):
    /// sockets are created non-blocking (c-ares leaves user-managed sockets as they are), the
    /// queries sent and answers read on datagram sockets are counted, so that
    /// `CurlTransfer.close()` waits for the answers still due (a late answer to a closed socket
    /// draws an ICMP port unreachable that has lost the device binding and leaves through the
    /// main routing table). c-ares keeps the pointer: allocated once, never changed.
    nonisolated(unsafe) static let socketFunctions: UnsafeMutablePointer<ares_socket_functions> = {
        let functions = UnsafeMutablePointer<ares_socket_functions>.allocate(capacity: 1)
        functions.initialize(
            to: ares_socket_functions(
                asocket: { domain, type, proto, _ in
                    socket(domain, type | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), proto)
                },
                aclose: { fd, data in TransferState.from(data).closeSocket(fd) },
                aconnect: { fd, address, length, _ in connect(fd, address, length) },
                arecvfrom: { fd, buffer, length, flags, from, fromLength, data in
                    let n = recvfrom(fd, buffer, length, flags, from, fromLength)
                    guard n > 0, let buffer else { return n }
                    let state = TransferState.from(data)
                    state.countDNSMessage(on: fd, -1)
                    // A datagram is a whole message: its response code is the low 4 bits of byte 3.
                    var type: Int32 = 0
                    var size = socklen_t(MemoryLayout<Int32>.size)
                    if n >= 4, getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) == 0,
                        type == Int32(SOCK_DGRAM.rawValue)
                    {
                        state.dnsResponseCodes.insert(buffer.load(fromByteOffset: 3, as: UInt8.self) & 0x0f)
                    }
                    return n
                },
                asendv: { fd, vectors, count, data in
                    let n = writev(fd, vectors, count)
                    if n > 0 { TransferState.from(data).countDNSMessage(on: fd, +1) }
                    return n
                }))
        return functions
    }()
}

extension IPType {
    /// The DNS record type(s) this family asks for, for messages.
    var recordName: String {
        switch self {
        case .ipv4: return "A"
        case .ipv6: return "AAAA"
        case .any: return "A or AAAA"
        }
    }
}
