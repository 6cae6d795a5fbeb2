import AppexHostClient
import BenchSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The PSI row: how soon appexd's pressure level leaves Normal once tasks stall on memory,
/// with PSI as its only signal (no budget: nothing but the system's PSI triggers and
/// MemAvailable judge). The stall is made safely: psi-thrash in a v1 memory cgroup of its own
/// (64 MiB, 52 MiB of it held), re-reading a 256 MiB file, so its own reads wait on reclaim and
/// refaults; the rest of the machine is short of nothing. Target: within one trigger window.
@MainActor final class PSISide {
    let process: Process
    let socket: String
    let client: HostClient
    let file: String
    let cgroup: String
    let thrash: String
    /// The window appexd's trigger was armed with, from its log; nil if it did not say.
    private(set) var windowMillis: Int?
    let logPath: String

    init(appexd: String, thrash: String, root: String) async {
        socket = root + "/psi.sock"
        logPath = root + "/psi-appexd.log"
        file = root + "/psi-file.bin"
        cgroup = "/sys/fs/cgroup/memory/appex-psi-bench-\(getpid())"
        self.thrash = thrash
        // The file the thrash re-reads: random bytes, so nothing dedups or compresses them.
        guard FileManager.default.createFile(atPath: file, contents: nil), let out = FileHandle(forWritingAtPath: file),
            let random = FileHandle(forReadingAtPath: "/dev/urandom")
        else { fail("cannot write \(file)") }
        for _ in 0..<256 { out.write(random.readData(ofLength: 1 << 20)) }
        try? out.close()
        let dir = cgroup
        cleanups.append { PSISide.removeCgroup(dir) }
        process = startAppexd(
            appexd,
            arguments: [
                "--state-dir", root + "/psi-state", "--cgroup-parent", "appex-psi-bench-appexd-\(getpid())",
                "--uid-range", "351000-351999", "--metrics", "off",
                // debug: the line that says which PSI window the kernel accepted.
                "--log-level", "debug",
            ], logPath: logPath, socket: socket)
        do { client = try HostClient.connect(socketPath: socket, identifier: "dev.appex.bench.psi") } catch { fail("appexd: \(error)") }
    }

    /// One trial: ns from the stall's start (the thrash cgroup's charge first at its limit) to
    /// appexd's level leaving normal (polled every 5 ms), or nil when the level was not normal
    /// to begin with (another stall on the machine) or did not move within 5 s.
    func trial() async throws -> (detected: UInt64?, note: String?) {
        if windowMillis == nil, let log = try? String(contentsOfFile: logPath, encoding: .utf8),
            let line = log.split(separator: "\n").first(where: { $0.contains("PSI some trigger armed, window") }),
            let ms = line.split(separator: " ").reversed().dropFirst().first.flatMap({ Int($0) })
        {
            windowMillis = ms
        }
        // Quiet first: the level must be normal (stalls elsewhere on the machine hold it up).
        var quiet = false
        for _ in 0..<200 {
            if try await client.jetsam().level == "normal" {
                quiet = true
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        guard quiet else { return (nil, "the level was not normal for 10 s before the trial (a stall elsewhere)") }
        // An unprivileged trigger is judged on the stall of the last window: the previous
        // trial's stall must be out of it first, or it fires again before this one starts.
        try await Task.sleep(for: .milliseconds((windowMillis ?? 2000) + 500))
        // Evict the file, so the first pass reads it from the disk too.
        let fd = open(file, O_RDONLY)
        if fd >= 0 {
            _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
            close(fd)
        }

        Self.removeCgroup(cgroup)
        guard mkdir(cgroup, 0o755) == 0 || errno == EEXIST else { fail("mkdir \(cgroup): errno \(errno)") }
        Self.write(cgroup + "/memory.limit_in_bytes", "\(64 << 20)")
        let child = Process()
        child.executableURL = URL(fileURLWithPath: thrash)
        child.arguments = [cgroup + "/cgroup.procs", "52", "4", file]
        let spawned = now()
        try child.run()
        defer {
            Self.removeCgroup(cgroup)
            child.waitUntilExit()
        }
        // The stall starts when the cgroup's charge first meets its limit (failcnt moves):
        // from then on each read waits on reclaim. Polled every 0.5 ms.
        var start: UInt64?
        while now() - spawned < 2_000_000_000 {
            if let f = try? String(contentsOfFile: cgroup + "/memory.failcnt", encoding: .utf8),
                (Int(f.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 0
            {
                start = now()
                break
            }
            usleep(500)
        }
        guard let start else { return (nil, "the thrash never reached its cgroup's limit") }
        if try await client.jetsam().level != "normal" { return (nil, "the level moved before the stall began") }
        while now() - start < 5_000_000_000 {
            if try await client.jetsam().level != "normal" { return (now() - start, nil) }
            try await Task.sleep(for: .milliseconds(5))
        }
        return (nil, "no level change within 5 s")
    }

    func stop() {
        client.close()
        stopAppexd(process)
        Self.removeCgroup(cgroup)
    }

    /// Kills what runs in the thrash cgroup and removes it (bounded: 5 s).
    static func removeCgroup(_ dir: String) {
        guard access(dir, F_OK) == 0 else { return }
        for _ in 0..<500 {
            let pids = ((try? String(contentsOfFile: dir + "/cgroup.procs", encoding: .utf8)) ?? "")
                .split(separator: "\n").compactMap { Int32($0) }
            for pid in pids { kill(pid, SIGKILL) }
            if rmdir(dir) == 0 || errno == ENOENT { return }
            usleep(10_000)
        }
    }

    static func write(_ path: String, _ value: String) {
        let fd = open(path, O_WRONLY)
        guard fd >= 0, Glibc.write(fd, value, value.utf8.count) == value.utf8.count else { fail("write \(value) to \(path): errno \(errno)") }
        close(fd)
    }
}
