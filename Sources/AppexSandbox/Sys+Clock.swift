import AppexCgroups
import AppexStateDirectory

extension Sys {
    static func monotonicNanos() -> UInt64 { MonotonicTime.now }
}
