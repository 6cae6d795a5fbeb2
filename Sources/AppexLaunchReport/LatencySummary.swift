/// Percentiles of a set of latencies in µs, computed exactly: the samples are sorted and the
/// p-th percentile is the nearest-rank value, `sorted[ceil(p / 100 × n) − 1]`, so every
/// number printed is one that was measured. `appex profile` has N samples and `appex report`
/// at most the history's 10,000 rows per table, so sorting them costs microseconds; a
/// streaming histogram (HdrHistogram, as the benchmarks use) pays off only for unbounded
/// streams, and its bucketed values would not match the history's rows exactly.
struct LatencySummary: Equatable, Sendable {
    /// Ascending.
    let sorted: [UInt64]

    init<S: Sequence>(_ samples: S) where S.Element == UInt64 {
        sorted = samples.sorted()
    }

    var count: Int { sorted.count }
    var isEmpty: Bool { sorted.isEmpty }
    var min: UInt64 { sorted.first ?? 0 }
    var max: UInt64 { sorted.last ?? 0 }
    var sum: UInt64 { sorted.reduce(0, &+) }
    var mean: Double { sorted.isEmpty ? 0 : Double(sum) / Double(sorted.count) }

    /// The nearest-rank `p`-th percentile (0 < p ≤ 100); 0 when there are no samples.
    func percentile(_ p: Double) -> UInt64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.min(Swift.max(rank, 1), sorted.count) - 1]
    }

    var p50: UInt64 { percentile(50) }
    var p90: UInt64 { percentile(90) }
    var p99: UInt64 { percentile(99) }

    /// `{"count", "min", "p50", "p90", "p99", "max", "mean"}`, µs (mean rounded).
    var json: [String: Any] {
        [
            "count": count, "min": Int(min), "p50": Int(p50), "p90": Int(p90), "p99": Int(p99), "max": Int(max),
            "mean": Int(mean.rounded()),
        ]
    }
}

/// How latencies are written for people: µs below a millisecond, then ms, then s.
enum Micros {
    static func format(_ us: UInt64) -> String { format(Double(us)) }

    static func format(_ us: Double) -> String {
        if us < 1000 { return "\(Int(us.rounded())) µs" }
        if us < 1_000_000 { return fixed(us / 1000) + " ms" }
        return fixed(us / 1_000_000) + " s"
    }

    /// Three significant digits at most, two decimals at most, no trailing zeros: 1.23, 12.3, 123, 1.5.
    static func fixed(_ v: Double) -> String {
        let decimals = v < 10 ? 2 : v < 100 ? 1 : 0
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let r = (v * scale).rounded() / scale
        if decimals == 0 { return String(Int(r)) }
        let whole = Int(r)
        var frac = String(Int(((r - Double(whole)) * scale).rounded()))
        while frac.count < decimals { frac = "0" + frac }
        // 1.00 s reads as 1 s, 1.50 ms as 1.5 ms.
        while frac.hasSuffix("0") { frac.removeLast() }
        return frac.isEmpty ? String(whole) : "\(whole).\(frac)"
    }

    /// `part` as a percentage of `whole`, e.g. "0.31 %".
    static func percent(_ part: Double, of whole: Double) -> String {
        guard whole > 0 else { return "–" }
        return fixed(part / whole * 100) + " %"
    }
}

extension Duration {
    /// Whole µs (a policy's launch deadline as the phases count it).
    var wholeMicroseconds: UInt64 {
        let c = components
        return UInt64(max(c.seconds, 0)) * 1_000_000 + UInt64(max(c.attoseconds, 0) / 1_000_000_000_000)
    }
}
