import CellpathCore
import Synchronization

/// DNS answers obtained through a bearer, kept for their TTL (at most `maximumTTL`) so that
/// the chains of later runs on the same bearer skip the lookup. An entry belongs to one path
/// (interface, bearer addresses, DNS servers): a bearer that came back with another address or
/// other DNS servers never sees it. Answers with a TTL of 0 are not kept. Any thread.
public final class BearerDNSCache: Sendable {
    /// The longest an answer is kept, in seconds, whatever TTL it came with.
    public static let maximumTTL = 300

    /// An answer found in the cache and the seconds of its TTL left (rounded up).
    struct Hit: Equatable {
        var addresses: [String]
        var ttlLeft: Int
    }

    private struct Key: Hashable {
        var interfaceName: String
        var ipv4Address: String?
        var ipv6Address: String?
        var dnsServers: [String]
        var host: String
        var family: IPType
    }

    private struct Entry {
        var addresses: [String]
        var expires: ContinuousClock.Instant
    }

    private let entries = Mutex<[Key: Entry]>([:])
    private let now: @Sendable () -> ContinuousClock.Instant

    /// `now` is the clock entries expire on (tests pass their own).
    public init(now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.now = now
    }

    /// The unexpired answer for `host` of `family` asked through `path`, if any.
    func answer(for host: String, family: IPType, on path: CellularPath) -> Hit? {
        let key = Self.key(host, family, path), now = now()
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard entry.expires > now else {
                entries[key] = nil
                return nil
            }
            let left = (entry.expires - now).components
            return Hit(addresses: entry.addresses, ttlLeft: Int(left.seconds) + (left.attoseconds > 0 ? 1 : 0))
        }
    }

    /// Keeps `addresses` for `ttl` seconds (capped at `maximumTTL`; 0 keeps nothing), dropping
    /// entries that have expired.
    func store(_ addresses: [String], ttl: Int, for host: String, family: IPType, on path: CellularPath) {
        let kept = min(ttl, Self.maximumTTL)
        guard kept > 0, !addresses.isEmpty else { return }
        let key = Self.key(host, family, path), now = now()
        entries.withLock { entries in
            entries = entries.filter { $0.value.expires > now }
            entries[key] = Entry(addresses: addresses, expires: now + .seconds(kept))
        }
    }

    private static func key(_ host: String, _ family: IPType, _ path: CellularPath) -> Key {
        Key(
            interfaceName: path.interfaceName, ipv4Address: path.ipv4Address, ipv6Address: path.ipv6Address,
            dnsServers: path.dnsServers, host: host.lowercased(), family: family)
    }
}
