#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC in nanoseconds: the one clock every deadline and phase in Appex is measured
/// on (cgroup waits, launch phases, the supervisor's timers).
public enum MonotonicTime {
    public static var now: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

extension Duration {
    /// Whole nanoseconds; a negative duration counts as zero.
    public var wholeNanoseconds: UInt64 {
        let (s, atto) = components
        return UInt64(max(0, s * 1_000_000_000 + atto / 1_000_000_000))
    }

    public var wholeMilliseconds: UInt64 { wholeNanoseconds / 1_000_000 }
}
