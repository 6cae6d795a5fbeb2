import AppexSystem
#if canImport(Glibc)
import Glibc
#endif

/// The system calls the parent side makes (AppexSystem), each failure a SandboxError
/// carrying the operation, the path and the errno.
package typealias Sys = SystemCalls<SandboxError>

/// A pthread mutex, and a condition for waiting under it, at fixed heap addresses: a
/// pthread object must not move, and `&` on a stored property gives an address only for the
/// length of one call. No NSLock: its first use brought Foundation's class machinery into
/// every `appex run`.
final class HeapMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// With the lock held: releases it, sleeps until `broadcast()`, takes it again (and may
    /// wake without one: callers wait in a loop on their own state).
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Wakes every `wait()`; called with the lock held.
    func broadcast() { pthread_cond_broadcast(condition) }
}

/// A value behind a lock, for state shared between threads.
final class Protected<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex = HeapMutex()

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&value)
    }
}
