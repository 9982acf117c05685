import CGIO
import CellpathCore
import FoundationEssentials
import GLibRuntime
import Synchronization
import Testing

/// The GLib loop thread, the actor whose jobs run on it, and the bridge of GIO-style calls.
@Suite struct GLibRuntimeTests {
    @Test func actorJobsRunOnTheLoopThreadWhoseContextIsItsThreadDefault() async {
        #expect(!GLibLoop.shared.isCurrent)
        let (onLoop, ownsDefault) = await Self.loopFacts()
        #expect(onLoop)
        #expect(ownsDefault)
    }

    @GLibActor
    static func loopFacts() -> (Bool, Bool) {
        (GLibLoop.shared.isCurrent, g_main_context_is_owner(g_main_context_get_thread_default()) != 0)
    }

    /// The libraries spawn their proxies from the loop thread: a child must not inherit the
    /// blocked signals of Swift's pool threads (a proxy that ignores SIGTERM).
    @Test func aChildSpawnedOnTheLoopBlocksNoSignal() async throws {
        let mask = try await Self.childSignalMask()
        #expect(mask == "SigBlk:\t0000000000000000")
    }

    @GLibActor
    static func childSignalMask() throws -> String {
        var output: UnsafeMutablePointer<gchar>?
        var error: UnsafeMutablePointer<GError>?
        guard g_spawn_command_line_sync("grep SigBlk /proc/self/status", &output, nil, nil, &error) != 0 else {
            throw GLibError(taking: error)
        }
        defer { g_free(output) }
        return String(cString: output!).trimmingCharacters(in: "\n")
    }

    @Test func jobsOfManyTasksRunOneAtATime() async {
        let counter = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0 ..< 200 { group.addTask { await counter.bump() } }
        }
        #expect(await counter.value == 200)
        #expect(await counter.overlaps == 0)
        #expect(await counter.offLoop == 0)
    }

    @Test func aCallReturnsWhatFinishMakesOfItsResultOnTheLoop() async throws {
        let (value, finishedOnLoop) = try await Self.runTask(returning: 42, timeout: 10)
        #expect(value == 42)
        #expect(finishedOnLoop)
    }

    @Test func aCallThatNeverCompletesTimesOut() async {
        await #expect(throws: GLibCallError.timedOut(seconds: 0.2)) {
            _ = try await Self.runTask(returning: nil, timeout: 0.2)
        }
    }

    @Test func cancellingTheTaskCancelsTheCall() async {
        let task = Task { try await Self.runTask(returning: nil, timeout: 30) }
        try? await Task.sleep(for: .milliseconds(100))
        task.cancel()
        await #expect(throws: GLibCallError.cancelled) { _ = try await task.value }
    }

    @Test func aCallThatDoesNotFollowTheTaskRunsOnWhenItIsCancelled() async {
        let task = Task { try await Self.runTask(returning: nil, timeout: 0.5, followingTask: false) }
        try? await Task.sleep(for: .milliseconds(100))
        task.cancel()
        await #expect(throws: GLibCallError.timedOut(seconds: 0.5)) { _ = try await task.value }
    }

    @Test func abortingAGroupEndsItsCallsAndRefusesNewOnes() async throws {
        let group = GLibCallGroup()
        let task = Task { try await Self.runTask(returning: nil, timeout: 30, group: group) }
        try? await Task.sleep(for: .milliseconds(100))
        GLibLoop.shared.perform { group.abort() }
        await #expect(throws: GLibCallError.aborted) { _ = try await task.value }
        await #expect(throws: GLibCallError.aborted) {
            _ = try await Self.runTask(returning: 1, timeout: 30, group: group)
        }
        // Another group's calls go on.
        #expect(try await Self.runTask(returning: 7, timeout: 30, group: GLibCallGroup()).0 == 7)
    }

    @Test func anErrorOfTheCallIsCopiedWithItsDomain() async {
        let error = await #expect(throws: GLibCallError.self) { _ = try await Self.runTask(returning: -1, timeout: 10) }
        guard case .failed(let failure) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.domain == g_io_error_quark())
        #expect(failure.code == Int32(G_IO_ERROR_NOT_SUPPORTED.rawValue))
        #expect(failure.message == "refused by the test")
    }

    @Test func libraryLogLinesGoToTheHandler() {
        let lines = Mutex<[String]>([])
        GLibLog.route { level, domain, message in lines.withLock { $0.append("\(level) \(domain ?? "-") \(message)") } }
        withVaList([]) { g_logv("Mbim", G_LOG_LEVEL_WARNING, "discarding unexpected message", $0) }
        withVaList([]) { g_logv("Qmi", G_LOG_LEVEL_DEBUG, "sent message", $0) }
        #expect(lines.withLock { $0 } == ["warning Mbim discarding unexpected message", "debug Qmi sent message"])
    }

    /// A GTask run in GIO's thread pool: it returns `value` (an error for -1), or, for nil,
    /// nothing until it is cancelled. Returns the value and whether `finish` ran on the loop.
    @GLibActor
    static func runTask(
        returning value: Int?, timeout: Double, followingTask: Bool = true,
        group: GLibCallGroup? = nil
    ) async throws(GLibCallError) -> (Int, Bool) {
        try await GLibAsync.call(
            timeout: timeout, followingTask: followingTask, group: group,
            start: { call in
                let task = g_task_new(nil, call.cancellable, call.callback, call.userData)
                g_task_set_return_on_cancel(task, 1)
                g_task_set_task_data(task, UnsafeMutableRawPointer(bitPattern: (value ?? -2) + 1000), nil)
                g_task_run_in_thread(task, testTaskBody)
                g_object_unref(gpointer(task))
            },
            finish: { result throws(GLibError) in
                var error: UnsafeMutablePointer<GError>?
                let value = g_task_propagate_int(result, &error)
                if error != nil { throw GLibError(taking: error) }
                return (value, GLibLoop.shared.isCurrent)
            })
    }
}

@GLibActor
final class Counter {
    private(set) var value = 0
    private(set) var overlaps = 0
    private(set) var offLoop = 0
    private var inside = false

    func bump() async {
        if inside { overlaps += 1 }
        if !GLibLoop.shared.isCurrent { offLoop += 1 }
        inside = true
        value += 1
        inside = false
    }
}

/// The body of `runTask`'s GTask, in GIO's thread pool (so not isolated to any actor).
private func testTaskBody(
    _ task: OpaquePointer?, _ source: gpointer?, _ data: gpointer?, _ cancellable: UnsafeMutablePointer<GCancellable>?
) {
    let value = Int(bitPattern: data) - 1000
    if value == -2 {
        while g_cancellable_is_cancelled(cancellable) == 0 { g_usleep(1000) }
    } else if value == -1 {
        g_task_return_error(
            task,
            g_error_new_literal(g_io_error_quark(), Int32(G_IO_ERROR_NOT_SUPPORTED.rawValue), "refused by the test"))
    } else {
        g_task_return_int(task, value)
    }
}

private extension String {
    func trimmingCharacters(in character: Character) -> String {
        String(drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}
