import CGIO

/// The actor of everything that touches GLib objects (libmbim and libqmi devices, clients,
/// messages): its jobs run on the one GLib loop thread (`GLibLoop`), so calls into those
/// libraries, their callbacks and the Swift code between them never run concurrently, and the
/// libraries attach their sources to the context that the loop thread runs.
@globalActor
public actor GLibActor {
    public static let shared = GLibActor()

    private static let executor = GLibExecutor()

    public nonisolated var unownedExecutor: UnownedSerialExecutor { Self.executor.asUnownedSerialExecutor() }
}

/// Runs the jobs of `GLibActor` on the GLib loop thread, one at a time, in the order queued.
final class GLibExecutor: SerialExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let box = UnsafeMutablePointer<UnownedJob>.allocate(capacity: 1)
        box.initialize(to: UnownedJob(job))
        GLibLoop.shared.schedule(
            { data in
                let box = data!.assumingMemoryBound(to: UnownedJob.self)
                let job = box.move()
                box.deallocate()
                job.runSynchronously(on: GLibActor.shared.unownedExecutor)
                return 0  // G_SOURCE_REMOVE
            }, box)
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        precondition(GLibLoop.shared.isCurrent, "not on the GLib loop thread")
    }
}

/// A pointer to a GLib object handed between tasks of `GLibActor` (a task group's children):
/// Swift cannot see that it is only ever used on the loop thread.
package struct LoopBound<Pointer>: @unchecked Sendable {
    package let pointer: Pointer

    package init(_ pointer: Pointer) { self.pointer = pointer }
}
