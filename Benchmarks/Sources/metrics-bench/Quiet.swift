import BenchSupport
import Foundation

/// Waits until the whole machine has been quiet (at most `busyLimit` of all CPUs busy) for two
/// half-second windows in a row, from /proc/stat; gives up after `timeout` seconds. Returns
/// how long it waited, s.
///
/// A fixed pause was not enough: after 1,000 extensions leave, the kernel tears down their
/// network namespaces in a workqueue for longer than the 10 s the benchmark used to wait, and
/// the second "alone" side measured that teardown (a launch 25–40 % slower than the first).
func waitForQuietMachine(busyLimit: Double = 0.05, timeout: Double = 120) async throws -> Double {
    let start = Date()
    var quietWindows = 0
    var previous = machineCPUTimes()
    while Date().timeIntervalSince(start) < timeout {
        try await Task.sleep(for: .milliseconds(500))
        let current = machineCPUTimes()
        let total = current.total - previous.total
        let busy = total > 0 ? Double(total - (current.idle - previous.idle)) / Double(total) : 0
        previous = current
        quietWindows = busy <= busyLimit ? quietWindows + 1 : 0
        if quietWindows >= 2 { return Date().timeIntervalSince(start) }
    }
    print("  (the machine stayed busier than \(Int(busyLimit * 100)) % for \(Int(timeout)) s; measuring anyway)")
    return Date().timeIntervalSince(start)
}
