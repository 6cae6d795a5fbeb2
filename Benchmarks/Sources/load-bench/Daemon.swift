import AppexHostClient
import BenchSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The real appexd under load: its own state directory, socket, cgroup parent and extension
/// uids; `hostUIDs` may host, root administers, every other uid is a stranger. Read from
/// outside through /proc/<pid>.
final class Daemon: @unchecked Sendable {
    let process = Process()
    let socket: String
    let state: String

    init(executable: String, root: String, hostUIDs: [UInt32], uids: String) {
        socket = root + "/appexd.sock"
        state = root + "/state"
        let config = root + "/appexd.yaml"
        // The shipped client bounds (Docs/security-model.md, "The daemon's boundary").
        do {
            try "hosts: [\(hostUIDs.map(String.init).joined(separator: ", "))]\nadmins: []\n".write(toFile: config, atomically: true, encoding: .utf8)
        } catch { fail("cannot write \(config): \(error)") }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "--state-dir", state, "--socket", socket, "--config", config,
            "--policies", root + "/policies",
            "--cgroup-parent", "appex-load-bench-\(getpid())", "--log-level", "warning",
            "--uid-range", uids, "--metrics", "off",
        ]
        // Its warnings (kills, refusals) go to a file, not between the benchmark's lines.
        _ = FileManager.default.createFile(atPath: root + "/appexd.log", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: root + "/appexd.log")
        do { try process.run() } catch { fail("cannot start appexd: \(error)") }
        cleanup.daemon = self
        if HostClient.waitUntilServing(socketPath: socket, attempts: 1000, interval: .milliseconds(10)) { return }
        stop()
        fail("appexd did not start answering on \(socket)")
    }

    var pid: Int32 { process.processIdentifier }

    private var readings: ProcessReadings { ProcessReadings(pid: pid) }

    /// Open descriptors (/proc/<pid>/fd entries).
    var descriptorCount: Int { readings.descriptorCount }

    /// VmRSS and VmHWM in bytes.
    var memory: (resident: Int, highWater: Int) { (readings.statusBytes("VmRSS:"), readings.statusBytes("VmHWM:")) }

    /// utime + stime in seconds, all of appexd's threads.
    var cpuSeconds: Double { readings.cpuSeconds }

    func stop() {
        guard process.isRunning else { return }
        kill(pid, SIGTERM)
        // Bounded: SIGKILL after 20 s (its extensions' cgroups go with it).
        for _ in 0..<200 where process.isRunning { usleep(100_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }
}
