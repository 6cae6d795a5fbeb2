import Histogram
#if canImport(Glibc)
import Glibc
#endif

// What every harness here shares: one clock and one histogram shape.

/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always) public func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Nanosecond samples up to a minute, three significant digits.
public func newHistogram() -> Histogram<UInt64> {
    Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
}
