#if canImport(Glibc)
import Glibc
#endif

/// A process's CPU time from `/proc/PID/stat`: what `ps` and `top` show. The memory cgroup
/// (v1) keeps no CPU account, and Appex does not join the cpu controller, so `appex top` asks
/// the kernel per process: one small read.
public enum ProcessCPUTime {
    /// User plus system time of `pid` (and of its children it has reaped), in microseconds;
    /// nil when the process is gone or the file cannot be read.
    public static func micros(pid: Int32) -> UInt64? {
        guard pid > 0, let text = try? Sys.readFile("/proc/\(pid)/stat") else { return nil }
        return micros(stat: text, includingChildren: true, ticksPerSecond: ticksPerSecond)
    }

    /// `stat`: utime, stime, cutime and cstime are fields 14–17, counted after the command
    /// name, which is in parentheses and may itself hold spaces and parentheses (the process
    /// chooses it): so, counted after the last `)`.
    public static func micros(stat: String, includingChildren: Bool, ticksPerSecond: Int) -> UInt64? {
        guard ticksPerSecond > 0, let close = stat.lastIndex(of: ")") else { return nil }
        // After ")": field 3 (state) is first, so fields 14…17 are at 11…14.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 14 else { return nil }
        let wanted = includingChildren ? 11...14 : 11...12
        var ticks: UInt64 = 0
        for i in wanted {
            guard let v = UInt64(fields[i]) else { return nil }
            ticks += v
        }
        return ticks * 1_000_000 / UInt64(ticksPerSecond)
    }

    public static let ticksPerSecond = Int(sysconf(Int32(_SC_CLK_TCK)))
}
