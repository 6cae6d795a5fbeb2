import AppexCgroups
import AppexSandbox
import CAppexLauncher
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a supervisor that died (SIGKILL, a crash, a power cut of the process) can leave
/// behind, removed before a new one accepts requests: cgroups under the supervisor's parent
/// (only appexd creates cgroups there), and processes running as a uid this state directory
/// allocated, which are extensions and sandbox inits by construction (the range is checked
/// against /etc/passwd and friends, `UIDRangeCheck`). Sandbox inits normally die with their
/// supervisor (their lifeline pipe closes) and take their pid namespace with them; the sweep
/// covers the ones caught mid-exit and anything that escaped into another state.
///
/// Only one supervisor may use a state directory at a time (`StateDirectoryLock`), so nothing
/// swept here can belong to a live one.
public enum StaleSweep {
    public struct Report: Sendable, Equatable {
        public var cgroups: [String] = []
        public var killedPIDs: [Int32] = []
        public var isEmpty: Bool { cgroups.isEmpty && killedPIDs.isEmpty }
    }

    public static func run(stateDirectory: String, cgroups: CgroupManager, uidRange: ClosedRange<UInt32>) throws -> Report {
        var report = Report()
        let uids = Set(try UIDAllocator(stateRoot: stateDirectory, range: uidRange).assignments().values)
        if !uids.isEmpty {
            report.killedPIDs = killProcesses(ownedBy: uids)
        }
        report.cgroups = try cgroups.cleanupLeftovers()
        return report
    }

    /// SIGKILLs every process whose real uid is in `uids` (read from /proc/PID/status), and
    /// returns their pids. Each is signalled through a pidfd, so a pid reused between the
    /// read and the kill is never hit.
    static func killProcesses(ownedBy uids: Set<UInt32>) -> [Int32] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var killed: [Int32] = []
        for name in entries {
            guard let pid = Int32(name), pid > 1 else { continue }
            let fd = appex_pidfd_open(pid)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            // Read the uid after the pidfd is open: the pidfd pins this very process.
            guard let uid = realUID(of: pid), uids.contains(uid) else { continue }
            if appex_pidfd_send_signal(fd, SIGKILL) == 0 { killed.append(pid) }
        }
        return killed
    }

    static func realUID(of pid: Int32) -> UInt32? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("Uid:") {
            return line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first.flatMap { UInt32($0) }
        }
        return nil
    }
}

/// An exclusive lock on a state directory (`flock` on `appexd.lock`), held for the life of
/// the supervisor: a second appexd on the same state is refused instead of sweeping the
/// first one's extensions away.
public final class StateDirectoryLock: Sendable {
    private let fd: Int32

    public init(stateDirectory: String) throws {
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        let path = stateDirectory + "/appexd.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SupervisorError.errno("open \(path)") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let e = errno
            close(fd)
            if e == EWOULDBLOCK {
                throw SupervisorError("lock \(path)", "another appexd is using the state directory \(stateDirectory)")
            }
            throw SupervisorError("lock \(path)", String(cString: strerror(e)))
        }
        self.fd = fd
    }

    deinit { close(fd) }
}
