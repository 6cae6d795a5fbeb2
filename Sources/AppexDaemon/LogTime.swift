#if canImport(Glibc)
import Glibc
#endif

/// The wall clock as RFC 3339 in UTC with microseconds (`2026-11-28T12:00:00.123456Z`).
enum LogTime {
    static func now() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return format(seconds: ts.tv_sec, micros: Int(ts.tv_nsec / 1000))
    }

    static func format(seconds: Int, micros: Int) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(micros), 6))Z"
    }
}
