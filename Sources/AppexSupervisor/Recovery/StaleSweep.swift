import AppexCgroups
import AppexSandbox
import AppexStateDirectory
import CAppexLinux
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
/// Only one supervisor may use a state directory at a time (`StateDirectoryLock`), and only
/// one a cgroup parent (`CgroupParentClaim`, taken when the supervisor is made), so nothing
/// swept here can belong to a live one.
public enum StaleSweep {
    public struct Report: Sendable, Equatable {
        public var cgroups: [String] = []
        public var killedPIDs: [Int32] = []
        public var isEmpty: Bool { cgroups.isEmpty && killedPIDs.isEmpty }
    }

    /// `embeddedPrefix`: also remove the parents that dead embedded supervisors of that kind
    /// left beside this one (`CgroupParentName.sweepEmbedded`).
    public static func run(
        stateDirectory: String, cgroups: CgroupManager, uidRange: ClosedRange<UInt32>,
        embeddedPrefix: String? = nil
    ) throws -> Report {
        var report = Report()
        let uids = Set(try UIDAllocator(stateRoot: stateDirectory, range: uidRange).assignments().values)
        if !uids.isEmpty {
            report.killedPIDs = killProcesses(ownedBy: uids)
        }
        report.cgroups = try cgroups.cleanupLeftovers()
        if let embeddedPrefix {
            report.cgroups += CgroupParentName.sweepEmbedded(embeddedPrefix, beside: cgroups)
        }
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

/// An exclusive lock on a state directory (`flock` on `appexd.lock`, which names its
/// holder's pid), held for the life of the supervisor: a second appexd on the same state is
/// refused, with the holder's pid, instead of sweeping the first one's extensions away.
public final class StateDirectoryLock: Sendable {
    private let file: PIDLockFile

    public init(stateDirectory: String) throws {
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        do {
            file = try PIDLockFile(path: stateDirectory + "/appexd.lock")
        } catch let held as PIDLockFile.Held {
            throw SupervisorError.inUse("lock \(held.path)", "the state directory \(stateDirectory) is in use by \(held.holder)")
        }
    }
}
