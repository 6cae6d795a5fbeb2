import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The reader role, passed between the SDK's two reader threads: one reads appexd's socket,
/// the other stands by. A reader that receives a request hands the role to the thread standing
/// by (one post; it does not wait for that thread to run) and starts the request's handler
/// itself, so the handler starts without waking another thread first, while a handler that
/// never returns still leaves a reader to answer pings. Once the handler returns or suspends,
/// its thread stands by in turn. With no thread standing by (it is running a handler of its
/// own), a request goes to the cooperative pool instead.
final class ReaderRole: @unchecked Sendable {
    /// Whether a thread waits for the role.
    private let standing = Atomic<Bool>(false)
    /// Posted once per hand-off. A POSIX semaphore is made for use from any thread (hence
    /// `@unchecked`); it lives, at a fixed address, as long as this object.
    private let handedOver: UnsafeMutablePointer<sem_t>

    init() {
        handedOver = .allocate(capacity: 1)
        sem_init(handedOver, 0, 0)
    }

    deinit {
        sem_destroy(handedOver)
        handedOver.deallocate()
    }

    /// Called by the reader: gives the role to the thread standing by, if there is one, and
    /// says whether it did (then the caller runs a handler and `standBy()`s after).
    func handOff() -> Bool {
        guard standing.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged else {
            return false
        }
        sem_post(handedOver)
        return true
    }

    /// Waits until handed the role; the caller reads from then on.
    func standBy() {
        standing.store(true, ordering: .releasing)
        while sem_wait(handedOver) != 0 && errno == EINTR {}
    }
}
