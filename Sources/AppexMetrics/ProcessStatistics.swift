import AppexCgroups
#if canImport(Glibc)
import Glibc
#endif

/// appexd's own CPU time and resident memory, from /proc/self: what `ps` shows, read at
/// scrape time (two small files, a few microseconds).
struct ProcessStatistics: Equatable {
    /// User plus system CPU time.
    var cpuSeconds: Double
    var residentBytes: Int64

    static func read() -> ProcessStatistics? {
        guard let stat = readSmallFile("/proc/self/stat"), let statm = readSmallFile("/proc/self/statm") else { return nil }
        return parse(stat: stat, statm: statm, ticksPerSecond: Int(sysconf(Int32(_SC_CLK_TCK))),
                     pageSize: Int(sysconf(Int32(_SC_PAGESIZE))))
    }

    /// `stat`: user and system time (ProcessCPUTime). `statm`: the second field is resident pages.
    static func parse(stat: String, statm: String, ticksPerSecond: Int, pageSize: Int) -> ProcessStatistics? {
        guard let micros = ProcessCPUTime.micros(stat: stat, includingChildren: false, ticksPerSecond: ticksPerSecond) else {
            return nil
        }
        let pages = statm.split(separator: " ")
        guard pages.count > 1, let resident = Int64(pages[1]) else { return nil }
        return ProcessStatistics(cpuSeconds: Double(micros) / 1e6, residentBytes: resident * Int64(pageSize))
    }

    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = Glibc.read(fd, &buffer, buffer.count)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }
}
