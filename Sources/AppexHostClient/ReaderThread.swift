import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A dedicated OS thread for a loop that blocks in recvmsg. A task would hold one of the
/// cooperative pool's threads (as many as cores, two on small machines) for the connection's
/// whole life and starve every other task.
final class ReaderThread: @unchecked Sendable {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    private var thread = pthread_t()
    /// Joined or detached already.
    private let released = Mutex(false)

    /// Starts `run` on a new thread.
    init(_ run: @escaping @Sendable () -> Void) throws(HostClientError) {
        let context = Unmanaged.passRetained(Body(run)).toOpaque()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
                body.run()
                return nil
            }, context)
        if rc != 0 {
            Unmanaged<Body>.fromOpaque(context).release()
            throw HostClientError(.socket, message: "pthread_create for the reader thread failed (errno \(rc))")
        }
    }

    /// Waits for the thread to end. Once; a second call, or a call from the thread itself
    /// (which would deadlock), returns at once.
    func join() {
        guard pthread_equal(pthread_self(), thread) == 0, claim() else { return }
        pthread_join(thread, nil)
    }

    /// Lets the thread's resources go when it ends, for a thread nobody will join (the
    /// client closed from the thread itself). Instead of `join`, once.
    func detach() {
        if claim() { pthread_detach(thread) }
    }

    /// True for the first caller of `join` or `detach`: a thread is joined or detached once.
    private func claim() -> Bool {
        released.withLock { released -> Bool in
            defer { released = true }
            return !released
        }
    }
}
