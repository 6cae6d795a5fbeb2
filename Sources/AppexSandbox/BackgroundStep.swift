import CAppexLinux

#if canImport(Glibc)
import Glibc
#endif

/// One throwing step run on a thread of its own while the caller does other work, then
/// joined. `ExtensionRun.prepare` builds the extension's sandbox this way (a clone with new
/// namespaces, the view's mounts, the init's exec: mostly kernel work) while it
/// compiles the filter and makes the cgroup and the log: two CPUs instead of one for a
/// one-shot `appex run`.
///
/// `join()` must be called exactly once, also when the caller's own work failed: the step
/// may have made something (a process, descriptors) that only its result can clean up.
final class BackgroundStep<Value: Sendable>: @unchecked Sendable {
    private let body: @Sendable () throws -> Value
    // Written by the step's thread before it ends; read after pthread_join, which orders
    // the two. Two optionals, not a `Result` (Handoff says why).
    private var value: Value?
    private var error: (any Error)?
    private var ran = false
    private var thread: JoinableThread?

    /// Starts `body` on a new thread (or, when none can be made, leaves it for `join()`).
    static func start(_ body: @escaping @Sendable () throws -> Value) -> BackgroundStep {
        let step = BackgroundStep(body)
        step.thread = JoinableThread.start { step.run() }
        return step
    }

    private init(_ body: @escaping @Sendable () throws -> Value) { self.body = body }

    private func run() {
        do { value = try body() } catch { self.error = error }
        ran = true
    }

    /// Waits for the step and returns its value or throws its error.
    func join() throws -> Value {
        thread?.join()
        thread = nil
        if !ran { run() }
        if let error { throw error }
        return value!
    }
}

/// A pthread running one closure, joined by its owner. Not generic: a C entry point cannot
/// carry a generic context.
private final class JoinableThread: @unchecked Sendable {
    private let work: @Sendable () -> Void
    private var thread = pthread_t()

    private init(_ work: @escaping @Sendable () -> Void) { self.work = work }

    /// nil when no thread can be made. Started on another CPU than the caller's
    /// (`appex_thread_start_elsewhere`): the point of the thread is to use the idle one.
    static func start(_ work: @escaping @Sendable () -> Void) -> JoinableThread? {
        let t = JoinableThread(work)
        let box = Unmanaged.passRetained(t).toOpaque()
        // The steps' Swift frames are shallow; the launcher's child runs on a stack of its own.
        let r = appex_thread_start_elsewhere(
            &t.thread, 1 << 20,
            { arg in
                Unmanaged<JoinableThread>.fromOpaque(arg!).takeRetainedValue().work()
                return nil
            }, box)
        guard r == 0 else {
            Unmanaged<JoinableThread>.fromOpaque(box).release()
            return nil
        }
        return t
    }

    func join() { pthread_join(thread, nil) }
}
