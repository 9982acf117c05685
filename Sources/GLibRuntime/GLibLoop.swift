import CGIO
import Glibc
import SystemSupport

/// The process's one GLib main loop: a dedicated thread that owns a GMainContext, pushed as its
/// thread-default context (libmbim and libqmi attach their sources to the thread-default context
/// of the thread that calls them), and runs it for the life of the process. Started on first use.
/// The thread blocks no signal: the libraries start mbim-proxy and qmi-proxy from it, and a child
/// inherits its thread's signal mask (Swift's pool threads block them all, which would leave a
/// proxy deaf to SIGTERM).
package final class GLibLoop: Sendable {
    package static let shared = GLibLoop()

    /// The loop thread's context; everything GLib does in cellpath is dispatched from it.
    private let context: ContextPointer

    private struct ContextPointer: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private init() {
        let context = ContextPointer(pointer: g_main_context_new())
        self.context = context
        do {
            try Threads.detach {
                var none = sigset_t()
                sigemptyset(&none)
                pthread_sigmask(SIG_SETMASK, &none, nil)
                g_main_context_push_thread_default(context.pointer)
                let loop = g_main_loop_new(context.pointer, 0)
                g_main_loop_run(loop)
            }
        } catch {
            fatalError("cannot start the GLib loop thread: \(error)")
        }
    }

    /// True on the loop thread (while it runs the context).
    package var isCurrent: Bool { g_main_context_is_owner(context.pointer) != 0 }

    /// Calls `function(data)` on the loop thread in a later iteration, at default priority, in
    /// the order of the calls. Never runs it inline, also when called on the loop thread:
    /// `g_main_context_invoke_full` would call it at once there, nesting one actor job inside
    /// another; an idle source attached to the context always waits for its turn (which is
    /// what `g_main_context_invoke_full` does from any other thread). Any thread.
    package func schedule(_ function: GSourceFunc, _ data: gpointer?) {
        let source = g_idle_source_new()
        g_source_set_priority(source, G_PRIORITY_DEFAULT)
        g_source_set_callback(source, function, data, nil)
        g_source_attach(source, context.pointer)
        g_source_unref(source)
    }

    /// Runs `body` on the loop thread in a later iteration. Any thread.
    package func perform(_ body: @escaping @Sendable () -> Void) {
        schedule(
            { data in
                Unmanaged<Work>.fromOpaque(data!).takeRetainedValue().body()
                return 0  // G_SOURCE_REMOVE
            }, Unmanaged.passRetained(Work(body)).toOpaque())
    }

    /// Calls `function(data)` on the loop thread after `seconds`, unless the returned source is
    /// destroyed first (`g_source_destroy`, then `g_source_unref`). `destroy` releases `data`.
    /// Loop thread only (the caller owns the returned reference).
    package func timer(
        after seconds: Double, _ function: GSourceFunc, _ data: gpointer?,
        destroy: GDestroyNotify?
    ) -> UnsafeMutablePointer<GSource> {
        let milliseconds = UInt32(max(0, min(Double(UInt32.max), (seconds * 1000).rounded(.up))))
        let source = g_timeout_source_new(milliseconds)!
        g_source_set_priority(source, G_PRIORITY_DEFAULT)
        g_source_set_callback(source, function, data, destroy)
        g_source_attach(source, context.pointer)
        return source
    }

    private final class Work: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
