import Foundation

/// A logarithmic axis over latencies in µs, from a 1-2-5 value at or below the smallest to
/// one at or above the largest. Launch phases span tens of µs to the launch deadline (1 s by
/// default): on a linear axis the deadline would squash every measurement into one pixel.
struct LogScale {
    let lo: Double
    let hi: Double
    /// Pixel positions of `lo` and `hi` (either order: y axes run upwards).
    let from: Double
    let to: Double

    /// Covers `low…high` (µs) with some room either side.
    init(covering low: Double, _ high: Double, from: Double, to: Double) {
        let l = Self.niceFloor(Swift.max(1, low) / 1.15)
        var h = Self.niceCeil(Swift.max(high, 1) * 1.15)
        if h <= l { h = Self.niceCeil(l * 1.5) }
        lo = l
        hi = h
        self.from = from
        self.to = to
    }

    /// Values below `lo` (a 0 µs phase) sit on the axis.
    func position(_ v: Double) -> Double {
        let t = (log10(Swift.max(v, lo)) - log10(lo)) / (log10(hi) - log10(lo))
        return from + Swift.min(Swift.max(t, 0), 1) * (to - from)
    }

    /// The 1-2-5 values inside the range; `labelled` says which to write (all when few).
    var ticks: [(value: Double, labelled: Bool)] {
        var out: [(Double, Bool)] = []
        var decade = pow(10, floor(log10(lo)))
        while decade <= hi {
            for m in [1.0, 2, 5] {
                let v = decade * m
                if v >= lo * 0.999 && v <= hi * 1.001 { out.append((v, m == 1)) }
            }
            decade *= 10
        }
        if out.count <= 9 { return out.map { ($0.0, true) } }
        // Many ticks: label the decades, and the first so the axis says where it starts.
        if !out.isEmpty { out[0].1 = true }
        return out
    }

    /// The largest 1, 2 or 5 × 10^k at or below `v`.
    static func niceFloor(_ v: Double) -> Double {
        let decade = pow(10, floor(log10(v)))
        let m = v / decade
        return decade * (m >= 5 ? 5 : m >= 2 ? 2 : 1)
    }

    /// The smallest 1, 2 or 5 × 10^k at or above `v`.
    static func niceCeil(_ v: Double) -> Double {
        let decade = pow(10, floor(log10(v)))
        let m = v / decade
        if m <= 1.000001 { return decade }
        return decade * (m <= 2 ? 2 : m <= 5 ? 5 : 10)
    }
}

/// A linear axis from 0 to a round maximum, for counts.
struct CountScale {
    let max: Double
    let step: Double
    let from: Double
    let to: Double

    init(maximum: Int, from: Double, to: Double) {
        let target = Swift.max(Double(maximum), 1)
        // About four ticks, on 1-2-5 steps, never below 1.
        let step = Swift.max(1, LogScale.niceCeil(target / 4))
        self.step = step
        self.max = ceil(target / step) * step
        self.from = from
        self.to = to
    }

    func position(_ v: Double) -> Double { from + v / max * (to - from) }

    var ticks: [Double] { stride(from: 0, through: max, by: step).map { $0 } }
}

/// Numbers and labels as SVG wants them.
enum SVGText {
    /// A coordinate: finite, one decimal at most (a NaN would be a console error in the browser).
    static func n(_ v: Double) -> String {
        guard v.isFinite else { return "0" }
        let r = (v * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(format: "%.1f", r)
    }

    /// A tick label for µs: "50 µs", "2 ms", "1.5 s".
    static func tick(_ us: Double) -> String {
        func trim(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(format: "%.1f", v) }
        if us < 1000 { return trim(us) + " µs" }
        if us < 1_000_000 { return trim(us / 1000) + " ms" }
        return trim(us / 1_000_000) + " s"
    }

    static func e(_ s: String) -> String { HTMLPage.escape(s) }
}
