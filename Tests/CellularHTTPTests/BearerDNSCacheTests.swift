import CellpathCore
import Synchronization
import Testing

@testable import CellularHTTP

/// The DNS cache shared by the chains on one bearer, on a clock the test moves.
struct BearerDNSCacheTests {
    /// A clock that stands still until the test moves it.
    final class TestClock: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(by duration: Duration) { instant.withLock { $0 += duration } }
    }

    let clock = TestClock()
    let cache: BearerDNSCache
    let path = CellularPath(interfaceName: "wwan0", ipv4Address: "100.64.23.5", dnsServers: ["100.64.0.53"])

    init() {
        let clock = clock
        cache = BearerDNSCache(now: { clock.now })
    }

    @Test func anAnswerIsKeptForItsTTLAndNotASecondLonger() {
        cache.store(["203.0.113.10"], ttl: 60, for: "api.truid.test", family: .ipv4, on: path)
        #expect(
            cache.answer(for: "api.truid.test", family: .ipv4, on: path)
                == .init(addresses: ["203.0.113.10"], ttlLeft: 60))
        clock.advance(by: .milliseconds(59_500))
        #expect(
            cache.answer(for: "api.truid.test", family: .ipv4, on: path)
                == .init(addresses: ["203.0.113.10"], ttlLeft: 1))
        clock.advance(by: .milliseconds(500))
        #expect(cache.answer(for: "api.truid.test", family: .ipv4, on: path) == nil)
    }

    @Test func aTTLOfZeroIsNotKept() {
        cache.store(["203.0.113.10"], ttl: 0, for: "api.truid.test", family: .ipv4, on: path)
        #expect(cache.answer(for: "api.truid.test", family: .ipv4, on: path) == nil)
    }

    @Test func aLongTTLIsCappedAtTheMaximum() {
        cache.store(["203.0.113.10"], ttl: 86_400, for: "api.truid.test", family: .ipv4, on: path)
        #expect(cache.answer(for: "api.truid.test", family: .ipv4, on: path)?.ttlLeft == BearerDNSCache.maximumTTL)
        clock.advance(by: .seconds(BearerDNSCache.maximumTTL))
        #expect(cache.answer(for: "api.truid.test", family: .ipv4, on: path) == nil)
    }

    @Test(arguments: [
        CellularPath(interfaceName: "wwan0", ipv4Address: "100.64.23.6", dnsServers: ["100.64.0.53"]),
        CellularPath(interfaceName: "wwan0", ipv4Address: "100.64.23.5", dnsServers: ["100.64.0.54"]),
        CellularPath(interfaceName: "wwan1", ipv4Address: "100.64.23.5", dnsServers: ["100.64.0.53"]),
        CellularPath(
            interfaceName: "wwan0", ipv4Address: "100.64.23.5", ipv6Address: "fd00:64::5", dnsServers: ["100.64.0.53"])
    ])
    func anAnswerAskedThroughAnotherPathIsNeverUsed(other: CellularPath) {
        cache.store(["203.0.113.10"], ttl: 60, for: "api.truid.test", family: .ipv4, on: path)
        #expect(cache.answer(for: "api.truid.test", family: .ipv4, on: other) == nil)
        #expect(cache.answer(for: "api.truid.test", family: .ipv4, on: path) != nil)
    }

    @Test func theOperatorSentIsNoPartOfThePath() {
        cache.store(["203.0.113.10"], ttl: 60, for: "api.truid.test", family: .ipv4, on: path)
        var withOperator = path
        withOperator.operatorID = "234-10"
        #expect(cache.answer(for: "api.truid.test", family: .ipv4, on: withOperator) != nil)
    }

    @Test func anotherHostOrFamilyIsAnotherEntry() {
        cache.store(["203.0.113.10"], ttl: 60, for: "api.truid.test", family: .ipv4, on: path)
        #expect(cache.answer(for: "mno.carrier.test", family: .ipv4, on: path) == nil)
        #expect(cache.answer(for: "api.truid.test", family: .any, on: path) == nil)
        #expect(cache.answer(for: "API.truid.test", family: .ipv4, on: path) != nil)
    }

    @Test func aNewAnswerReplacesTheOld() {
        cache.store(["203.0.113.10"], ttl: 60, for: "api.truid.test", family: .ipv4, on: path)
        clock.advance(by: .seconds(30))
        cache.store(["203.0.113.11"], ttl: 10, for: "api.truid.test", family: .ipv4, on: path)
        #expect(
            cache.answer(for: "api.truid.test", family: .ipv4, on: path)
                == .init(addresses: ["203.0.113.11"], ttlLeft: 10))
    }
}
