import Glibc
import SystemSupport
import Testing

/// Runs each test of a suite (or one test) on threads of its own instead of Swift's cooperative
/// pool, which has one thread per core: tests that block (child processes, `poll`, sleeps) then
/// run side by side in a parallel `swift test` and never starve the async code that they, or
/// other tests, are testing. At most `limit`'s number of a class of tests run at once, queued
/// without blocking a thread, so that the tests' processes do not outnumber what the machine
/// runs in time (tests with deadlines fail on a machine that is overloaded).
public struct OwnThreads: SuiteTrait, TestTrait, TestScoping {
    /// A bound on how many tests of one class run at once.
    public struct Limit: Sendable {
        /// Taken in this order, given back once the test ends.
        fileprivate let slots: [Slots]

        private static let blockingSlots = Slots(count: width("CELLPATH_TEST_WIDTH", default: 3))
        private static let worldSlots = Slots(count: width("CELLPATH_TEST_WORLDS", default: 3))

        /// Tests that block in child processes, ptys or sockets: `CELLPATH_TEST_WIDTH` at once (3).
        public static let blocking = Limit(slots: [blockingSlots])
        /// Tests that bring up a simulated world, or a namespace world with servers of their own:
        /// `CELLPATH_TEST_WORLDS` at once (3), beside the `blocking` ones.
        public static let worlds = Limit(slots: [worldSlots])
        /// Load tests, which measure what a world serves when nothing else runs: one at a time,
        /// and only once every `blocking` and `worlds` test that runs has ended.
        public static let alone = Limit(
            slots: [Slots(count: 1)]
                + Array(repeating: worldSlots, count: worldSlots.count)
                + Array(repeating: blockingSlots, count: blockingSlots.count))

        /// A positive number from the environment variable `name`, else `fallback`.
        private static func width(_ name: String, default fallback: Int) -> Int {
            getenv(name).flatMap { Int(String(cString: $0)) }.map { max(1, $0) } ?? fallback
        }
    }

    let limit: Limit

    public var isRecursive: Bool { true }

    /// Every test case, not the suite as a whole: the bound counts tests.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? { testCase == nil ? nil : self }

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        for slots in limit.slots { await slots.acquire() }
        do {
            try await withTaskExecutorPreference(OwnThreadsExecutor.shared, operation: function)
        } catch {
            for slots in limit.slots { await slots.release() }
            throw error
        }
        for slots in limit.slots { await slots.release() }
    }
}

extension Trait where Self == OwnThreads {
    /// Runs the tests on threads of their own (`OwnThreads`), as `blocking` tests.
    public static var ownThreads: Self { OwnThreads(limit: .blocking) }

    /// Runs the tests on threads of their own, at most `limit`'s number at once.
    public static func ownThreads(_ limit: OwnThreads.Limit) -> Self { OwnThreads(limit: limit) }
}

/// A counting semaphore for async code: `acquire` suspends, never blocks, until a slot is free.
actor Slots {
    /// How many there are.
    nonisolated let count: Int
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) {
        self.count = count
        free = count
    }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Frees a slot, handing it to the first waiter if any.
    func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}

/// A task executor that runs every job on a thread of its own: an idle thread if there is one,
/// else a new one (idle threads end after 10 s). A job that blocks holds its thread only.
final class OwnThreadsExecutor: TaskExecutor {
    static let shared = OwnThreadsExecutor()

    private struct Queue: Sendable {
        var jobs: [UnownedJob] = []
        /// Threads waiting for a job.
        var idle = 0
    }

    private let queue = WaitableValue(Queue())

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        var needsThread = false
        queue.update { queue in
            queue.jobs.append(job)
            needsThread = queue.jobs.count > queue.idle
        }
        guard needsThread else { return }
        do { try Threads.detach { self.work() } } catch { fatalError("no thread for a test's job: \(error)") }
    }

    private func work() {
        while let job = next() { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// The next job, or nil when none came for 10 s.
    private func next() -> UnownedJob? {
        let deadline = MonotonicClock.now + 10
        queue.update { $0.idle += 1 }
        while true {
            _ = queue.wait(until: { !$0.jobs.isEmpty }, timeout: .seconds(max(0, deadline - MonotonicClock.now)))
            var job: UnownedJob?
            var expired = false
            queue.update { queue in
                if !queue.jobs.isEmpty {
                    job = queue.jobs.removeFirst()
                    queue.idle -= 1
                } else if MonotonicClock.now >= deadline {
                    queue.idle -= 1
                    expired = true
                }
            }
            if let job { return job }
            if expired { return nil }
        }
    }
}
