import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// appexd's descriptors and resident memory, sampled every 100 ms on a thread of its own
/// while the load runs: the most seen.
final class Sampler: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var maxDescriptors = 0, maxResident = 0, samples = 0
    private let finished = DispatchSemaphore(value: 0)

    init(_ daemon: Daemon) {
        Thread { [self] in
            while lock.withLock({ running }) {
                let descriptors = daemon.descriptorCount, resident = daemon.memory.resident
                lock.withLock {
                    maxDescriptors = max(maxDescriptors, descriptors)
                    maxResident = max(maxResident, resident)
                    samples += 1
                }
                usleep(100_000)
            }
            finished.signal()
        }.start()
    }

    /// Stops sampling; the peaks and the number of samples.
    func stop() -> (descriptors: Int, resident: Int, samples: Int) {
        lock.withLock { running = false }
        finished.wait()
        return lock.withLock { (maxDescriptors, maxResident, samples) }
    }
}
