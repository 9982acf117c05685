import SimulatorScenario
import Synchronization
import SystemSupport

/// What the carrier vouches for after identifying a subscriber by source address: the SIM
/// and the network it is attached to.
public struct SubscriberAssertion: Sendable, Equatable {
    public var sim: SimulatedSIM
    public var network: SimulatedNetwork?
}

/// The back channel between the carrier's identification endpoint and the fake API: the
/// carrier issues an opaque, single-use assertion id that travels in the redirect back to
/// the API, which redeems it. Keeps personal data out of URLs. Safe from any thread.
public final class SubscriberAssertionLedger: Sendable {
    private let assertions = Mutex<[String: SubscriberAssertion]>([:])

    public init() {}

    /// Stores an assertion and returns its id.
    public func issue(_ assertion: SubscriberAssertion) -> String {
        let id = RandomBytes.hex(16)
        assertions.withLock { $0[id] = assertion }
        return id
    }

    /// Returns and forgets the assertion `id`; nil when unknown or already redeemed.
    public func redeem(_ id: String) -> SubscriberAssertion? {
        assertions.withLock { $0.removeValue(forKey: id) }
    }
}
