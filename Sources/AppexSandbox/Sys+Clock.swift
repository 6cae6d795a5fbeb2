import AppexCgroups
import AppexStateDirectory

/// The sandbox's clock, beside the wrappers it shares with the state directory: it reads
/// AppexCgroups' monotonic clock, which the state directory has no need to link.
extension Sys {
    static func monotonicNanos() -> UInt64 { MonotonicTime.now }
}
