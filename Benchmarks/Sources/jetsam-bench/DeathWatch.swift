import CDeathWatch
import Foundation

/// Watches one process die, on a thread of its own blocked in poll on its pidfd, so the moment
/// is read as soon as the kernel says so, whatever the harness's tasks are doing. Started
/// before the victim starts growing.
final class DeathWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var result: UInt64??
    private var waiter: CheckedContinuation<UInt64?, Never>?

    /// Nil when the process is already gone (pidfd_open failed).
    init?(pid: Int32, timeoutMilliseconds: Int32) {
        let fd = death_watch_open(pid)
        guard fd >= 0 else { return nil }
        let thread = Thread { [self] in
            let t = death_watch_wait(fd, timeoutMilliseconds)
            close(fd)
            finish(t == 0 ? nil : t)
        }
        thread.start()
    }

    private func finish(_ t: UInt64?) {
        lock.lock()
        if let waiter {
            lock.unlock()
            waiter.resume(returning: t)
        } else {
            result = .some(t)
            lock.unlock()
        }
    }

    /// CLOCK_MONOTONIC ns of the death, or nil when the timeout came first.
    func death() async -> UInt64? {
        await withCheckedContinuation { c in
            lock.lock()
            if let result {
                lock.unlock()
                c.resume(returning: result)
            } else {
                waiter = c
                lock.unlock()
            }
        }
    }
}
