import CGIO

/// What a bridged call passes to the C function that starts the operation
/// (`mbim_device_command (device, message, timeout, cancellable, callback, user_data)`).
package struct GLibAsyncArguments {
    package let cancellable: UnsafeMutablePointer<GCancellable>
    package let callback: GAsyncReadyCallback
    package let userData: gpointer
}

/// Bridges GIO-style asynchronous C calls (start with a callback, then `_finish`) to async/await
/// on `GLibActor`.
package enum GLibAsync {
    /// Starts an operation with `start`, waits for its callback without blocking the loop, and
    /// returns what `finish` makes of its GAsyncResult; `finish` (the library's `_finish`) runs
    /// on the actor. The operation gets a GCancellable that is cancelled when `seconds` have
    /// passed or, if `followingTask`, when the Swift task is cancelled (then the error is
    /// `.timedOut` or `.cancelled`, even if the library reports the cancellation differently).
    /// An operation whose result must not be lost (one that allocates something to release)
    /// does not follow the task: it runs to its end or its time limit.
    /// A call of an aborted `group` fails with `.aborted`, also when it is already under way.
    @GLibActor
    package static func call<Value>(
        timeout seconds: Double, followingTask: Bool = true, group: GLibCallGroup? = nil,
        start: (GLibAsyncArguments) -> Void,
        finish: (OpaquePointer) throws(GLibError) -> Value
    ) async throws(GLibCallError) -> Value {
        if group?.isAborted == true { throw .aborted }
        let call = PendingCall()
        group?.calls.insert(call)
        defer { group?.calls.remove(call) }
        let result = await withoutActuallyEscaping(start) { start in
            let begin = { (continuation: CheckedContinuation<AsyncResult, Never>) in
                call.continuation = continuation
                call.startTimer(seconds)
                start(
                    GLibAsyncArguments(
                        cancellable: call.cancellable, callback: asyncReady,
                        userData: Unmanaged.passRetained(call).toOpaque()))
            }
            guard followingTask else { return await withCheckedContinuation(begin) }
            return await withTaskCancellationHandler {
                await withCheckedContinuation(begin)
            } onCancel: {
                call.cancelOnLoop()
            }
        }
        defer { g_object_unref(gpointer(result.pointer)) }
        call.stopTimer()
        let value: Value
        do {
            value = try finish(result.pointer)
        } catch {
            if call.aborted { throw .aborted }
            if call.timedOut { throw .timedOut(seconds: seconds) }
            if followingTask && Task.isCancelled { throw .cancelled }
            throw .failed(error)
        }
        return value
    }

    /// A GAsyncResult with a reference of ours, handed from the callback to the waiting task.
    struct AsyncResult: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// One call in flight. Touched on the loop thread only, except `cancelOnLoop`.
    final class PendingCall: @unchecked Sendable, Hashable {
        let cancellable: UnsafeMutablePointer<GCancellable> = g_cancellable_new()
        var continuation: CheckedContinuation<AsyncResult, Never>?
        private var timer: UnsafeMutablePointer<GSource>?
        private(set) var timedOut = false
        private(set) var aborted = false

        static func == (a: PendingCall, b: PendingCall) -> Bool { a === b }
        func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

        /// Cancels the call for its group. Loop thread.
        func abort() {
            aborted = true
            g_cancellable_cancel(cancellable)
        }

        deinit { g_object_unref(gpointer(cancellable)) }

        /// Cancels the operation after `seconds`.
        func startTimer(_ seconds: Double) {
            timer = GLibLoop.shared.timer(
                after: seconds,
                { data in
                    let call = Unmanaged<PendingCall>.fromOpaque(data!).takeUnretainedValue()
                    call.timedOut = true
                    g_cancellable_cancel(call.cancellable)
                    return 0  // G_SOURCE_REMOVE
                }, Unmanaged.passRetained(self).toOpaque(),
                destroy: { data in
                    Unmanaged<PendingCall>.fromOpaque(data!).release()
                })
        }

        func stopTimer() {
            guard let timer else { return }
            g_source_destroy(timer)
            g_source_unref(timer)
            self.timer = nil
        }

        /// Cancels the operation from any thread: on the loop, where its handlers expect to run.
        func cancelOnLoop() {
            GLibLoop.shared.perform { g_cancellable_cancel(self.cancellable) }
        }
    }
}

/// The one GAsyncReadyCallback of every bridged call: keeps the result and resumes the task
/// waiting for it (whose next job is queued on the loop, where `_finish` then runs).
private func asyncReady(_ source: UnsafeMutablePointer<GObject>?, _ result: OpaquePointer?, _ userData: gpointer?) {
    let call = Unmanaged<GLibAsync.PendingCall>.fromOpaque(userData!).takeRetainedValue()
    g_object_ref(gpointer(result))
    call.continuation?.resume(returning: GLibAsync.AsyncResult(pointer: result!))
    call.continuation = nil
}

/// Calls that end together: `abort()` (the device they talk to was removed) cancels every call
/// of the group in flight, which then fails with `.aborted`, as do later calls. Loop thread
/// only: abort it from a signal handler of the loop, or from `GLibActor`.
package final class GLibCallGroup: @unchecked Sendable {
    fileprivate var calls = Set<GLibAsync.PendingCall>()
    package private(set) var isAborted = false

    package init() {}

    package func abort() {
        isAborted = true
        for call in calls { call.abort() }
    }
}
