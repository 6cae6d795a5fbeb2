import CAppexLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The reader role, shared by the SDK's two reader threads: one reads appexd's socket, the
/// other stands by. A reader that receives a request runs the request's handler itself, at
/// once, until the handler returns or first suspends, and then reads on. The thread standing
/// by takes over reading only if the handler outlasts `patience`: the reader arms a timer
/// before the handler and disarms it after, and the standby waits on that timer. So a quick
/// handler costs no other thread a wake-up, and a handler that never returns still leaves a
/// reader to answer pings. The thread whose handler was overtaken stands by once it is done.
/// With no thread standing by (it is running a handler of its own), a request goes to the
/// cooperative pool instead.
final class ReaderRole: Sendable {
    /// How long a handler may run on the reader's thread before the other thread reads.
    static let patience: Duration = .milliseconds(1)
    private static let patienceNanoseconds = patience.components.seconds * 1_000_000_000 + patience.components.attoseconds / 1_000_000_000

    /// Whether a thread waits for the role.
    private let standing = Atomic<Bool>(false)
    /// Set while the reader runs a handler; whichever thread clears it, the reader when the
    /// handler is done or the standby when the timer fires, reads next.
    private let handlerRunning = Atomic<Bool>(false)
    /// A timerfd (CLOCK_MONOTONIC, one-shot), armed for `patience` while a handler runs.
    private let timer: Int32

    /// nil when no timerfd can be made (the caller then starts every request on the pool).
    init?() {
        timer = appex_timerfd_cloexec(0)
        if timer < 0 { return nil }
    }

    deinit { close(timer) }

    /// Called by the reader before it runs a handler: false when no thread stands by (the
    /// caller starts the handler on the pool).
    func willRunHandler() -> Bool {
        guard standing.load(ordering: .acquiring) else { return false }
        handlerRunning.store(true, ordering: .releasing)
        check(appex_timerfd_arm(timer, Self.patienceNanoseconds), "arming")
        return true
    }

    /// Called by the reader once the handler has returned or suspended: true when it is still
    /// the reader, false when the standby took over (the caller then `standBy()`s).
    func didRunHandler() -> Bool {
        // Disarmed first: an expiry not yet read is cleared with it.
        check(appex_timerfd_disarm(timer), "disarming")
        return handlerRunning.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
    }

    /// Counts the calling thread as standing by (`waitForTurn` follows), or a thread about to
    /// be started that will: the first request then already finds it.
    func willStandBy() {
        standing.store(true, ordering: .releasing)
    }

    /// The thread `willStandBy` counted will not come after all.
    func wontStandBy() {
        standing.store(false, ordering: .releasing)
    }

    /// Stands by until a reader's handler outlasts `patience`; the caller reads from then on.
    func standBy() {
        willStandBy()
        waitForTurn()
    }

    /// Waits, counted as standing by, until a reader's handler outlasts `patience`.
    func waitForTurn() {
        while true {
            var expirations: UInt64 = 0
            let n = read(timer, &expirations, MemoryLayout<UInt64>.size)
            if n < 0 && errno != EINTR {
                ExtensionLog.fail("reading the reader role's timer failed: \(SystemError.text(errno))")
            }
            // An expiry the reader's handler beat by a hair finds the flag cleared: wait on.
            if handlerRunning.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged {
                standing.store(false, ordering: .releasing)
                return
            }
        }
    }

    private func check(_ done: Int32, _ what: String) {
        if done != 0 { ExtensionLog.fail("\(what) the reader role's timer failed: \(SystemError.text(errno))") }
    }
}
