import AppexSystem

#if canImport(Glibc)
import Glibc
#endif

/// The system calls the parent side makes (AppexSystem), each failure a SandboxError
/// carrying the operation, the path and the errno.
package typealias Sys = SystemCalls<SandboxError>

/// A pthread mutex at a fixed heap address (a pthread object must not move), locked and
/// unlocked apart: only for `DescriptorPump`, whose lock spans more than one scope. State
/// behind a plain lock is a `Synchronization.Mutex`.
package final class HeapMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }
}
