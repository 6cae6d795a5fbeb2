#if canImport(Glibc)
import Glibc
#endif

/// A value behind a pthread mutex. The SDK's shared state is tiny and its critical sections
/// never await or block, so a plain mutex is enough (and the Synchronization module's Mutex
/// carries an OS-availability floor this package does not have).
final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
