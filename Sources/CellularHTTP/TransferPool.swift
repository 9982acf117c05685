import CellpathCore
import Synchronization

/// The idle transfers of one `HTTPClient` on the default network, each keeping its open
/// connections: a request takes one made for its CA file and address family (most recently used
/// first), and gives it back after a clean exchange. Holds at most `capacity`; a transfer idle
/// longer than `idleLimit` is closed when a later take meets it; the rest close with the pool.
final class TransferPool: Sendable {
    /// What a transfer is configured with for good: requests only share transfers made alike.
    struct Key: Hashable, Sendable {
        var caFile: String?
        var ipType: IPType
    }

    /// An idle transfer. `@unchecked Sendable` because `CurlTransfer` is not; it is safe: only the
    /// pool holds an idle transfer, and hands it over under its lock to one taker, which alone
    /// uses it until it gives it back.
    private struct Idle: @unchecked Sendable {
        let transfer: CurlTransfer
        let key: Key
        let since: ContinuousClock.Instant
    }

    let capacity: Int
    let idleLimit: Duration
    private let idle = Mutex<[Idle]>([])

    init(capacity: Int, idleLimit: Duration) {
        self.capacity = capacity
        self.idleLimit = idleLimit
    }

    /// Idle transfers now.
    var count: Int { idle.withLock { $0.count } }

    /// An idle transfer made for `key`, or nil; closes those idle too long.
    func take(_ key: Key) -> CurlTransfer? {
        let now = ContinuousClock.now, limit = idleLimit
        let (found, expired) = idle.withLock { list -> (Idle?, [Idle]) in
            let expired = list.filter { now - $0.since > limit }
            if !expired.isEmpty { list.removeAll { now - $0.since > limit } }
            guard let i = list.lastIndex(where: { $0.key == key }) else { return (nil, expired) }
            return (list.remove(at: i), expired)
        }
        for entry in expired { entry.transfer.close() }
        return found?.transfer
    }

    /// Keeps `transfer`, made for `key`, for a later request; closes it when the pool is full.
    func put(_ transfer: CurlTransfer, _ key: Key) {
        let entry = Idle(transfer: transfer, key: key, since: .now)
        let capacity = capacity
        let kept = idle.withLock { list -> Bool in
            guard list.count < capacity else { return false }
            list.append(entry)
            return true
        }
        if !kept { transfer.close() }
    }
}
