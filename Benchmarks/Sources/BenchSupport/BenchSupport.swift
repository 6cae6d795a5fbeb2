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

/// A harness's options: `--NAME N` pairs, each N a positive count, NAME one of `names`.
/// Returns the counts given, or what is wrong (for the harness's own `fail`).
public func parseCounts(_ arguments: [String], names: [String]) -> Result<[String: Int], CountsError> {
    var counts: [String: Int] = [:]
    var rest = arguments[...]
    while let flag = rest.popFirst() {
        let name = String(flag.drop { $0 == "-" })
        guard flag.hasPrefix("--"), names.contains(name) else {
            return .failure(CountsError("unknown option \(flag) (\(names.map { "--\($0) N" }.joined(separator: ", ")))"))
        }
        guard let value = rest.popFirst().flatMap(Int.init), value > 0 else { return .failure(CountsError("\(flag) wants a positive count")) }
        counts[name] = value
    }
    return .success(counts)
}

public struct CountsError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
