import AppexTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Fields of /proc/PID/status and /proc/PID/stat.
enum ProcStatus {
    /// Resident memory in KiB (VmRSS).
    static func residentKiB(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        else {
            throw ExtensionProcess.Failure("no VmRSS in /proc/\(pid)/status")
        }
        return kib
    }

    /// The scheduler state letter (R running, S sleeping, ...) and user-mode CPU ticks.
    static func state(_ pid: pid_t) throws -> (state: Character, userTicks: Int) {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the command name in parentheses: state is field 3, utime field 14.
        guard let close = stat.lastIndex(of: ")") else { throw ExtensionProcess.Failure("bad /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let state = fields[0].first, let ticks = Int(fields[11]) else {
            throw ExtensionProcess.Failure("bad /proc/\(pid)/stat: \(stat)")
        }
        return (state, ticks)
    }
}
