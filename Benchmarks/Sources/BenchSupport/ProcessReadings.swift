import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What a harness reads of another process (an appexd under test) from /proc/<pid>.
public struct ProcessReadings: Sendable {
    public let pid: Int32

    public init(pid: Int32) { self.pid = pid }

    /// Open descriptors (/proc/<pid>/fd entries).
    public var descriptorCount: Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
    }

    /// Threads (/proc/<pid>/task entries).
    public var threadCount: Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).count
    }

    /// A /proc/<pid>/status field given in kB, in bytes: `VmRSS:`, `VmHWM:`; 0 when absent.
    public func statusBytes(_ key: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(key) } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// utime + stime in seconds, all of its threads.
    public var cpuSeconds: Double {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let u = Double(fields[11]), let s = Double(fields[12]) else { return 0 }
        return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// The first line of /proc/stat: all CPUs' jiffies, and of them idle + iowait.
public func machineCPUTimes() -> (total: UInt64, idle: UInt64) {
    guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
    else { return (0, 0) }
    let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
    guard fields.count >= 5 else { return (0, 0) }
    // user nice system idle iowait irq softirq steal…
    return (fields.prefix(8).reduce(0, +), fields[3] + fields[4])
}
