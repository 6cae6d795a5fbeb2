import AppexCgroups
import AppexSystem

#if canImport(Glibc)
import Glibc
#endif

/// appexd's own process figures, from /proc/self: what `ps` shows, read at scrape time. They
/// back both the standard `process_*` metrics every Prometheus client library exports and
/// appexd's own `appex_supervisor_*` pair.
struct ProcessStatistics: Equatable {
    /// User plus system CPU time.
    var cpuSeconds: Double
    var residentBytes: Int64
    var virtualBytes: Int64
    /// When the process started, in seconds since the Unix epoch.
    var startTimeSeconds: Double
    var openDescriptors: Int
    /// RLIMIT_NOFILE's soft limit.
    var maxDescriptors: Int

    static func read() -> ProcessStatistics? {
        guard let stat = readFile("/proc/self/stat"), let statm = readFile("/proc/self/statm"),
            var s = parse(
                stat: stat, statm: statm, ticksPerSecond: Int(sysconf(Int32(_SC_CLK_TCK))),
                pageSize: Int(sysconf(Int32(_SC_PAGESIZE))))
        else { return nil }
        if let boot = bootTime { s.startTimeSeconds += Double(boot) }
        s.openDescriptors = countOpenDescriptors()
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { s.maxDescriptors = Int(clamping: limit.rlim_cur) }
        return s
    }

    /// `stat`: user and system time (ProcessCPUTime), `starttime` (field 22, ticks after boot:
    /// the result's start time is relative to boot until `read` adds the boot time) and `vsize`
    /// (field 23, bytes). `statm`: the second field is resident pages.
    static func parse(stat: String, statm: String, ticksPerSecond: Int, pageSize: Int) -> ProcessStatistics? {
        guard let micros = ProcessCPUTime.micros(stat: stat, includingChildren: false, ticksPerSecond: ticksPerSecond),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After ")": field 3 (state) is first, so fields 22 and 23 are at 19 and 20.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let pages = statm.split(separator: " ")
        guard fields.count > 20, let start = UInt64(fields[19]), let vsize = Int64(fields[20]),
            pages.count > 1, let resident = Int64(pages[1])
        else { return nil }
        return ProcessStatistics(
            cpuSeconds: Double(micros) / 1e6, residentBytes: resident * Int64(pageSize),
            virtualBytes: vsize, startTimeSeconds: Double(start) / Double(ticksPerSecond),
            openDescriptors: 0, maxDescriptors: 0)
    }

    /// Read once: it does not change while the system runs.
    private static let bootTime: Int64? = readFile("/proc/stat").flatMap(bootTime(procStat:))

    /// `btime` of /proc/stat: the boot time in seconds since the epoch.
    static func bootTime(procStat: String) -> Int64? {
        for line in procStat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Int64(line.dropFirst(6))
        }
        return nil
    }

    /// Entries of /proc/self/fd, less the one the count itself holds open.
    private static func countOpenDescriptors() -> Int {
        guard let dir = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(dir) }
        var n = 0
        while let entry = readdir(dir) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { n += 1 }
        }
        return max(n - 1, 0)
    }

    /// To EOF (procfs files report size 0, and /proc/stat grows with the CPUs and interrupts);
    /// nil when unreadable or empty.
    private static func readFile(_ path: String) -> String? {
        guard let text = try? SystemCalls<SystemCallError>.readFile(path), !text.isEmpty else { return nil }
        return text
    }
}
