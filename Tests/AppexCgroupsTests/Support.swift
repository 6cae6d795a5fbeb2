import Foundation
import Synchronization

@testable import AppexCgroups

#if canImport(Glibc)
import Glibc
#endif

/// Unique names per test process and test: parallel runs (and other engineers' tests) never collide.
enum Names {
    private static let counter = Mutex(0)
    static func unique(_ tag: String) -> String {
        let n = counter.withLock { c -> Int in
            c += 1
            return c
        }
        return "appex-test-\(getpid())-\(tag)-\(n)"
    }
}

let MiB: Int64 = 1 << 20

/// A `/bin/sh` child that blocks on its stdin until `release()`, so the test can put it
/// into a cgroup (parent side, `addProcess`) before it runs its script: no race.
final class GatedChild {
    let pid: pid_t
    private var gate: Int32
    private var reaped = false

    init(_ script: String, stdout: String? = nil) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(.init(rawValue: errno)!) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        posix_spawn_file_actions_addclose(&actions, fds[1])
        posix_spawn_file_actions_addopen(&actions, 1, stdout ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [String] = ["/bin/sh", "-c", "read _gate; " + script]
        var cargs = argv.map { strdup($0) } + [nil]
        defer { cargs.forEach { free($0) } }
        var p: pid_t = 0
        let rc = posix_spawn(&p, "/bin/sh", &actions, nil, &cargs, environ)
        close(fds[0])
        guard rc == 0 else {
            close(fds[1])
            throw POSIXError(.init(rawValue: rc)!)
        }
        pid = p
        gate = fds[1]
    }

    /// Lets the script run.
    func release() {
        guard gate >= 0 else { return }
        _ = write(gate, "go\n", 3)
        close(gate)
        gate = -1
    }

    enum Exit: Equatable { case status(Int32), signal(Int32) }

    /// Waits for the child (bounded), returning how it ended; nil on timeout.
    func wait(timeout: Double = 20) -> Exit? {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            var st: Int32 = 0
            let r = waitpid(pid, &st, WNOHANG)
            if r == pid {
                reaped = true
                let sig = st & 0x7f
                return sig == 0 ? .status((st >> 8) & 0xff) : .signal(sig)
            }
            if r < 0 { return nil }
            usleep(5000)
        }
        return nil
    }

    /// Kills and reaps, for cleanup.
    func stop() {
        release()
        if !reaped {
            kill(pid, SIGKILL)
            var st: Int32 = 0
            _ = waitpid(pid, &st, 0)
            reaped = true
        }
    }

    deinit { stop() }
}

/// Polls `body` until it returns true (bounded).
func eventually(timeout: Double = 10, _ body: () throws -> Bool) rethrows -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
        if try body() { return true }
        usleep(10_000)
    }
    return try body()
}

/// A v1 manager under a unique parent; `cleanup()` kills, removes every cgroup and the parent.
struct LiveV1 {
    let manager: CgroupManager

    init(_ tag: String) throws {
        manager = try CgroupManager(version: .v1, roots: .systemV1, parentName: Names.unique(tag))
    }

    func cleanup() {
        _ = try? manager.cleanupLeftovers()
        try? manager.removeParent()
    }
}

/// A scratch file of `mebibytes` MiB under /var/tmp (a real disk, not tmpfs, so its pages are
/// clean page cache). The caller unlinks it.
func makeScratchFile(mebibytes: Int, fill: UInt8) -> String {
    let path = "/var/tmp/" + Names.unique("bigfile")
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    precondition(fd >= 0, "cannot create \(path)")
    let chunk = [UInt8](repeating: fill, count: 1 << 20)
    for _ in 0..<mebibytes { _ = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
    close(fd)
    return path
}
