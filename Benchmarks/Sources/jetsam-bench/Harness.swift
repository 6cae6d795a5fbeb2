import AppexHostClient
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The load, the same on both sides: `step` bytes every `interval`, up to `cap` bytes of
/// growth, held for `hold` (longer than any trial waits) unless the bloater is killed first.
struct GrowPlan {
    var stepKiB: Int
    var intervalMicros: Int
    var capMiB: Int
    var holdMilliseconds: Int

    /// grow.h's text form: STEP_KIB,INTERVAL_US,CAP_MIB,HOLD_MS.
    var argument: String { "\(stepKiB),\(intervalMicros),\(capMiB),\(holdMilliseconds)" }
    var mibPerSecond: Double { Double(stepKiB) / 1024 / (Double(intervalMicros) / 1e6) }
}

/// How one trial ended, on either side.
enum TrialResult {
    /// Dead; `latency` from the growth crossing the threshold to the death, ns.
    case killed(latency: UInt64)
    /// Dead before the log shows the threshold crossed, or the line was crossed before the
    /// growth started: ns before (0 when it was never crossed or already crossed).
    case early(by: UInt64)
    /// Still alive when the trial gave up.
    case notKilled
}

/// What to stop and remove if the harness fails half-way.
nonisolated(unsafe) var cleanups: [() -> Void] = []

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("jetsam-bench: \(message)\n".utf8))
    for c in cleanups.reversed() { c() }
    exit(1)
}

/// Starts appexd with `arguments`, its log in `logPath`, stopped (SIGTERM) by the cleanups if
/// the harness fails, and waits until it answers on `socket`.
func startAppexd(_ appexd: String, arguments: [String], logPath: String, socket: String) -> Process {
    guard FileManager.default.createFile(atPath: logPath, contents: nil) else { fail("cannot create \(logPath)") }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: appexd)
    process.arguments = ["--socket", socket] + arguments
    process.standardError = FileHandle(forWritingAtPath: logPath)
    do { try process.run() } catch { fail("cannot start appexd: \(error)") }
    cleanups.append { stopAppexd(process) }
    guard HostClient.waitUntilServing(socketPath: socket, attempts: 1000, interval: .milliseconds(10)) else {
        fail("appexd did not start answering on \(socket); its log: \(logPath)")
    }
    return process
}

func stopAppexd(_ process: Process) {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGTERM)
    process.waitUntilExit()
}

/// Latency of a death at `death` (nil: none before the timeout) against the crossing.
func result(_ crossing: Crossing, death: UInt64?) -> TrialResult {
    guard let death else { return .notKilled }
    switch crossing {
    case .at(let t) where death >= t: return .killed(latency: death - t)
    case .at(let t): return .early(by: t - death)
    case .beforeGrowth, .never: return .early(by: 0)
    }
}

/// A uniformly random pause before the growth starts, so that it crosses the threshold at any
/// phase of earlyoom's polling period (100 ms at its shortest). The same on both sides.
func randomDelayMicros() -> Int { Int.random(in: 0..<100_000) }

func sleepMicros(_ us: Int) {
    var asked = timespec(tv_sec: us / 1_000_000, tv_nsec: (us % 1_000_000) * 1000), left = timespec()
    while nanosleep(&asked, &left) != 0 && errno == EINTR { asked = left }
}
