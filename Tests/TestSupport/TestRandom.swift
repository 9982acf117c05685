import Glibc

/// A seeded generator for tests that pick random schedules (delays, timings), so that a failing
/// run can be replayed: the seed is `CELLPATH_TEST_SEED` when set, a fresh one otherwise, and
/// `replay` names it for the failure message. SplitMix64.
public struct TestRandom: RandomNumberGenerator, Sendable {
    /// The variable that replays a run.
    public static let seedVariable = "CELLPATH_TEST_SEED"

    public let seed: UInt64
    private var state: UInt64

    /// A generator seeded with `seed`, else `CELLPATH_TEST_SEED`, else a fresh random seed.
    public init(seed: UInt64? = nil) {
        let fromEnvironment = getenv(Self.seedVariable).flatMap { UInt64(String(cString: $0)) }
        self.seed = seed ?? fromEnvironment ?? UInt64.random(in: 0 ... UInt64.max)
        state = self.seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// How to replay this run, for a failure message.
    public var replay: String { "seed \(seed) (replay with \(Self.seedVariable)=\(seed))" }
}
