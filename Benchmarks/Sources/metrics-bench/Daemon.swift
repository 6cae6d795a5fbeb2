import AppexHostClient
import BenchSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The real appexd under test, with what the benchmark reads from outside it: its resident
/// memory and CPU time (/proc/<pid>), and where its metrics are.
final class Daemon {
    let process = Process()
    let socket: String
    let state: String

    init(
        executable: String, root: String, policies: String, uids: String, metrics: Bool = true, name: String = "state",
        prebuild: Bool = false
    ) {
        socket = root + "/\(name).sock"
        state = root + "/" + name
        // appexd holds a few descriptors per live instance (pidfds, its socket, the footprint
        // eventfd, the log pipe): raised to 65,536 where allowed (CAP_SYS_RESOURCE), else to the
        // hard limit (appexd itself raises its soft limit to the hard one).
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        var wanted = rlimit(rlim_cur: max(65536, limit.rlim_max), rlim_max: max(65536, limit.rlim_max))
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &wanted) != 0 {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            print("  appexd's descriptor limit: \(limit.rlim_max) (not allowed to raise it)")
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments =
            [
                "--state-dir", state, "--socket", socket, "--policies", policies,
                "--cgroup-parent", "appex-metrics-bench-\(getpid())-\(name)", "--log-level", "warning",
                "--uid-range", uids, "--metrics", metrics ? "127.0.0.1:0" : "off",
            ]
            + (prebuild ? ["--prebuild-sandboxes"] : [])
        do { try process.run() } catch { fail("cannot start appexd: \(error)") }
        running.append(self)
        if HostClient.waitUntilServing(socketPath: socket, attempts: 1000, interval: .milliseconds(10)) { return }
        stop()
        fail("appexd did not start answering on \(socket)")
    }

    var metricsAddress: String {
        guard let text = try? String(contentsOfFile: state + "/metrics-address", encoding: .utf8) else {
            fail("no \(state)/metrics-address")
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private var readings: ProcessReadings { ProcessReadings(pid: process.processIdentifier) }

    /// VmRSS in bytes.
    var residentBytes: Int { readings.statusBytes("VmRSS:") }

    /// utime + stime in seconds, all of appexd's threads.
    var cpuSeconds: Double { readings.cpuSeconds }

    /// Open descriptors (/proc/<pid>/fd entries).
    var descriptorCount: Int { readings.descriptorCount }

    /// Threads (/proc/<pid>/task entries).
    var threadCount: Int { readings.threadCount }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

/// The appexds to stop and the directory to remove when the benchmark fails half-way.
nonisolated(unsafe) var running: [Daemon] = []
nonisolated(unsafe) var scratch: String?

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("metrics-bench: \(message)\n".utf8))
    for daemon in running { daemon.stop() }
    if let scratch { try? FileManager.default.removeItem(atPath: scratch) }
    exit(1)
}
