import Foundation

/// The charts of the `appex profile` and `appex report` pages, drawn as inline SVG by hand:
/// none of the Swift packages this project can use draws charts, and these are a few
/// rectangles and lines each. Latency axes are logarithmic (SVGScale.swift), and the launch
/// deadline is a red line wherever a latency is drawn.
enum SVGChart {
    static let width = 900.0

    /// A line that shows where a percentile or the deadline falls in the legend.
    struct Mark {
        var name: String
        var micros: UInt64
        var cssClass: String
    }

    // MARK: distribution of one phase

    /// A histogram of `summary`'s samples on a log axis (30 bins a decade), with p50, p90 and
    /// p99 as dashed lines and `deadline` as a red one.
    static func distribution(_ summary: LatencySummary, deadline: UInt64?, label: String) -> String {
        let height = 240.0, left = 56.0, right = width - 24, top = 40.0, bottom = height - 36
        // The axis spans the data; the deadline joins it only when it is near (within
        // `deadlineReach` of the largest sample), else it is marked off scale at the right
        // edge: a 1 s line would squeeze 50 µs samples into the left third.
        let onScale = deadline.map { Double($0) <= Double(summary.max) * deadlineReach } ?? false
        let high = Double(onScale ? Swift.max(summary.max, deadline ?? 0) : summary.max)
        let x = LogScale(covering: Double(summary.min), high, from: left, to: right)
        let binsPerDecade = 30.0
        let binCount = Swift.max(1, Int((log10(x.hi) - log10(x.lo)) * binsPerDecade))
        var bins = [Int](repeating: 0, count: binCount)
        for v in summary.sorted {
            let t = (log10(Swift.max(Double(v), x.lo)) - log10(x.lo)) * binsPerDecade
            bins[Swift.min(Swift.max(Int(t), 0), binCount - 1)] += 1
        }
        let y = CountScale(maximum: bins.max() ?? 1, from: bottom, to: top)

        var s = open(height: height, title: "\(label): distribution of \(summary.count) samples")
        s += legend(
            at: top - 22, left: left,
            [
                Mark(name: "p50", micros: summary.p50, cssClass: "p50"),
                Mark(name: "p90", micros: summary.p90, cssClass: "p90"),
                Mark(name: "p99", micros: summary.p99, cssClass: "p99"),
            ] + (deadline.map { [Mark(name: "deadline", micros: $0, cssClass: "deadline")] } ?? []),
            extra: "max \(Micros.format(summary.max)) · n \(summary.count)")
        s += countAxis(y, left: left, right: right, label: "launches")
        s += logAxisX(x, y: bottom, top: top)
        for (i, count) in bins.enumerated() where count > 0 {
            let x0 = x.lo * pow(10, Double(i) / binsPerDecade), x1 = x.lo * pow(10, Double(i + 1) / binsPerDecade)
            let px0 = x.position(x0), px1 = x.position(x1)
            let py = y.position(Double(count))
            s +=
                "<rect class=\"bar\" x=\"\(SVGText.n(px0))\" y=\"\(SVGText.n(py))\" width=\"\(SVGText.n(Swift.max(px1 - px0 - 0.6, 0.8)))\" height=\"\(SVGText.n(Swift.max(bottom - py, 0)))\"><title>\(SVGText.e("\(SVGText.tick(x0))–\(SVGText.tick(x1)): \(count)"))</title></rect>"
        }
        for mark in [("p50", summary.p50), ("p90", summary.p90), ("p99", summary.p99)] {
            let px = x.position(Double(mark.1))
            s +=
                "<line class=\"\(mark.0) marker\" x1=\"\(SVGText.n(px))\" y1=\"\(SVGText.n(top))\" x2=\"\(SVGText.n(px))\" y2=\"\(SVGText.n(bottom))\"/>"
        }
        if let deadline, onScale {
            let px = x.position(Double(deadline))
            s += "<line class=\"deadline\" x1=\"\(SVGText.n(px))\" y1=\"\(SVGText.n(top - 4))\" x2=\"\(SVGText.n(px))\" y2=\"\(SVGText.n(bottom))\"/>"
            s +=
                "<text class=\"deadline\" x=\"\(SVGText.n(px - 4))\" y=\"\(SVGText.n(top + 10))\" text-anchor=\"end\">deadline \(SVGText.e(Micros.format(deadline)))</text>"
        } else if let deadline {
            // Off scale: an arrow at the right edge says how far beyond the axis it is.
            let times = Double(deadline) / Swift.max(Double(summary.max), 1)
            s +=
                "<path class=\"deadline off-scale\" d=\"M \(SVGText.n(right - 10)) \(SVGText.n(top + 2)) L \(SVGText.n(right)) \(SVGText.n(top + 6)) L \(SVGText.n(right - 10)) \(SVGText.n(top + 10)) Z\"/>"
            s +=
                "<text class=\"deadline off-scale\" x=\"\(SVGText.n(right - 14))\" y=\"\(SVGText.n(top + 10))\" text-anchor=\"end\">deadline \(SVGText.e(Micros.format(deadline))) → \(SVGText.e(Self.multiple(times))) the largest</text>"
        }
        return s + "</svg>"
    }

    /// How near the deadline must be to the largest sample to share its axis.
    static let deadlineReach = 4.0

    /// "12×", "1,250×": how many times the largest sample the deadline is.
    static func multiple(_ times: Double) -> String {
        times >= 10 ? "\(Int(times.rounded()).formatted())×" : String(format: "%.1f×", times)
    }

    // MARK: percentiles over categories (time buckets, versions)

    /// One category on the x axis and its percentiles.
    struct Point {
        var label: String
        var summary: LatencySummary
    }

    /// p50, p90 and p99 per category as three lines (time buckets), on a log axis, with the
    /// deadline.
    static func percentileLines(_ points: [Point], deadline: UInt64?, title: String) -> String {
        let f = PercentileFrame(points, deadline: deadline)
        let y = f.y, left = f.left, right = f.right, step = f.step
        func px(_ i: Int) -> Double { left + step * (Double(i) + 0.5) }

        var s = f.start(title: title)
        for (name, value) in [("p50", \LatencySummary.p50), ("p90", \LatencySummary.p90), ("p99", \LatencySummary.p99)] {
            let coords = points.enumerated().map { i, p in "\(SVGText.n(px(i))),\(SVGText.n(y.position(Double(p.summary[keyPath: value]))))" }
            if coords.count > 1 {
                s += "<polyline class=\"\(name) series\" points=\"\(coords.joined(separator: " "))\"/>"
            }
            for (i, p) in points.enumerated() {
                let v = p.summary[keyPath: value]
                s +=
                    "<circle class=\"\(name)\" cx=\"\(SVGText.n(px(i)))\" cy=\"\(SVGText.n(y.position(Double(v))))\" r=\"3\"><title>\(SVGText.e("\(p.label) \(name) \(Micros.format(v)) (n \(p.summary.count))"))</title></circle>"
            }
        }
        if let deadline { s += deadlineLine(y.position(Double(deadline)), left: left, right: right, micros: deadline) }
        return s + "</svg>"
    }

    /// p50, p90 and p99 per category as grouped bars (versions), on a log axis, with the deadline.
    static func percentileBars(_ points: [Point], deadline: UInt64?, title: String) -> String {
        let f = PercentileFrame(points, deadline: deadline)
        let y = f.y, left = f.left, right = f.right, step = f.step, bottom = f.bottom
        let barWidth = Swift.min(36, step / 4)

        var s = f.start(title: title)
        for (i, p) in points.enumerated() {
            let center = left + step * (Double(i) + 0.5)
            for (j, (name, v)) in [("p50", p.summary.p50), ("p90", p.summary.p90), ("p99", p.summary.p99)].enumerated() {
                let x0 = center + (Double(j) - 1.5) * barWidth
                let top = y.position(Double(v))
                s +=
                    "<rect class=\"\(name)\" x=\"\(SVGText.n(x0))\" y=\"\(SVGText.n(top))\" width=\"\(SVGText.n(barWidth - 2))\" height=\"\(SVGText.n(Swift.max(bottom - top, 0)))\"><title>\(SVGText.e("\(p.label) \(name) \(Micros.format(v)) (n \(p.summary.count))"))</title></rect>"
            }
        }
        if let deadline { s += deadlineLine(y.position(Double(deadline)), left: left, right: right, micros: deadline) }
        return s + "</svg>"
    }

    /// What the two percentile charts share: the geometry, the log scale over the summaries
    /// and the deadline, and the opening with the p50/p90/p99 (and deadline) legend and axes.
    private struct PercentileFrame {
        let points: [Point]
        let deadline: UInt64?
        let height = 260.0, left = 64.0, right = SVGChart.width - 24, top = 40.0
        var bottom: Double { height - 48 }
        let y: LogScale
        let step: Double

        init(_ points: [Point], deadline: UInt64?) {
            self.points = points
            self.deadline = deadline
            y = SVGChart.latencyScale(points.map(\.summary), deadline: deadline, from: height - 48, to: top)
            step = (right - left) / Double(Swift.max(points.count, 1))
        }

        func start(title: String) -> String {
            var s = SVGChart.open(height: height, title: title)
            s += SVGChart.legend(
                at: top - 22, left: left,
                [
                    Mark(name: "p50", micros: 0, cssClass: "p50"), Mark(name: "p90", micros: 0, cssClass: "p90"),
                    Mark(name: "p99", micros: 0, cssClass: "p99"),
                ] + (deadline.map { [Mark(name: "deadline", micros: $0, cssClass: "deadline")] } ?? []), extra: nil)
            s += SVGChart.logAxisY(y, left: left, right: right)
            s += SVGChart.categoryAxis(points.map(\.label), left: left, step: step, y: bottom)
            return s
        }
    }

    // MARK: counts

    /// One horizontal bar per row, longest first as given (terminations by reason).
    static func countBars(_ rows: [(label: String, count: Int)], title: String) -> String {
        let rowHeight = 24.0, left = 170.0, right = width - 60, top = 34.0
        let height = top + rowHeight * Double(rows.count) + 30
        let x = CountScale(maximum: rows.map(\.count).max() ?? 1, from: left, to: right)
        var s = open(height: height, title: title)
        s += "<text class=\"title\" x=\"0\" y=\"16\">\(SVGText.e(title))</text>"
        let bottom = top + rowHeight * Double(rows.count)
        for t in x.ticks {
            let px = x.position(t)
            s += "<line class=\"grid\" x1=\"\(SVGText.n(px))\" y1=\"\(SVGText.n(top))\" x2=\"\(SVGText.n(px))\" y2=\"\(SVGText.n(bottom))\"/>"
            s += "<text x=\"\(SVGText.n(px))\" y=\"\(SVGText.n(bottom + 14))\" text-anchor=\"middle\">\(Int(t))</text>"
        }
        for (i, row) in rows.enumerated() {
            let y0 = top + rowHeight * Double(i)
            let w = x.position(Double(row.count)) - left
            s += "<text x=\"\(SVGText.n(left - 8))\" y=\"\(SVGText.n(y0 + rowHeight / 2 + 4))\" text-anchor=\"end\">\(SVGText.e(row.label))</text>"
            s +=
                "<rect class=\"bar\" x=\"\(SVGText.n(left))\" y=\"\(SVGText.n(y0 + 4))\" width=\"\(SVGText.n(Swift.max(w, 1)))\" height=\"\(SVGText.n(rowHeight - 8))\"><title>\(SVGText.e("\(row.label): \(row.count)"))</title></rect>"
            s += "<text x=\"\(SVGText.n(left + w + 6))\" y=\"\(SVGText.n(y0 + rowHeight / 2 + 4))\">\(row.count)</text>"
        }
        s += "<line class=\"axis\" x1=\"\(SVGText.n(left))\" y1=\"\(SVGText.n(top))\" x2=\"\(SVGText.n(left))\" y2=\"\(SVGText.n(bottom))\"/>"
        return s + "</svg>"
    }

    // MARK: where launch time goes

    /// One segment of the stacked bar.
    struct Segment {
        var name: String
        var micros: Double
        var color: String
    }

    /// A single stacked bar of mean µs per segment (check-in time split into its parts), with
    /// a legend under it.
    static func stackedBar(_ segments: [Segment], title: String) -> String {
        let left = 0.0, right = width - 4, barTop = 26.0, barHeight = 28.0
        let total = segments.reduce(0) { $0 + $1.micros }
        let legendRows = (segments.count + 2) / 3
        let height = barTop + barHeight + 18 + Double(legendRows) * 18
        var s = open(height: height, title: title)
        s += "<text class=\"title\" x=\"0\" y=\"16\">\(SVGText.e(title))</text>"
        var x = left
        for seg in segments where seg.micros > 0 && total > 0 {
            let w = seg.micros / total * (right - left)
            s +=
                "<rect x=\"\(SVGText.n(x))\" y=\"\(SVGText.n(barTop))\" width=\"\(SVGText.n(w))\" height=\"\(SVGText.n(barHeight))\" fill=\"\(seg.color)\"><title>\(SVGText.e("\(seg.name): \(Micros.format(seg.micros)) (\(Micros.percent(seg.micros, of: total)))"))</title></rect>"
            x += w
        }
        for (i, seg) in segments.enumerated() {
            let lx = Double(i % 3) * 300, ly = barTop + barHeight + 18 + Double(i / 3) * 18
            s += "<rect x=\"\(SVGText.n(lx))\" y=\"\(SVGText.n(ly - 9))\" width=\"10\" height=\"10\" fill=\"\(seg.color)\"/>"
            s +=
                "<text x=\"\(SVGText.n(lx + 14))\" y=\"\(SVGText.n(ly))\">\(SVGText.e("\(seg.name) \(Micros.format(seg.micros)) (\(Micros.percent(seg.micros, of: total)))"))</text>"
        }
        return s + "</svg>"
    }

    // MARK: pieces

    private static func open(height: Double, title: String) -> String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(SVGText.n(width))\" height=\"\(SVGText.n(height))\" viewBox=\"0 0 \(SVGText.n(width)) \(SVGText.n(height))\" role=\"img\"><title>\(SVGText.e(title))</title>"
    }

    /// A log scale over every percentile drawn and the deadline.
    private static func latencyScale(_ summaries: [LatencySummary], deadline: UInt64?, from: Double, to: Double) -> LogScale {
        let low = summaries.map { Double($0.p50) }.min() ?? 1
        let high = Swift.max(summaries.map { Double($0.p99) }.max() ?? 1, Double(deadline ?? 0))
        return LogScale(covering: low, high, from: from, to: to)
    }

    private static func legend(at y: Double, left: Double, _ marks: [Mark], extra: String?) -> String {
        var s = "", x = left
        for m in marks {
            let text = m.micros > 0 ? "\(m.name) \(Micros.format(m.micros))" : m.name
            s +=
                "<line class=\"legend \(m.cssClass)\" x1=\"\(SVGText.n(x))\" y1=\"\(SVGText.n(y - 4))\" x2=\"\(SVGText.n(x + 16))\" y2=\"\(SVGText.n(y - 4))\" stroke-width=\"2\"/>"
            s += "<text x=\"\(SVGText.n(x + 20))\" y=\"\(SVGText.n(y))\">\(SVGText.e(text))</text>"
            x += 30 + Double(text.count) * 6.4
        }
        if let extra { s += "<text x=\"\(SVGText.n(x + 8))\" y=\"\(SVGText.n(y))\">\(SVGText.e(extra))</text>" }
        return s
    }

    private static func logAxisX(_ x: LogScale, y: Double, top: Double) -> String {
        var s = "<line class=\"axis\" x1=\"\(SVGText.n(x.from))\" y1=\"\(SVGText.n(y))\" x2=\"\(SVGText.n(x.to))\" y2=\"\(SVGText.n(y))\"/>"
        for t in x.ticks {
            let px = x.position(t.value)
            s +=
                "<line class=\"axis\" x1=\"\(SVGText.n(px))\" y1=\"\(SVGText.n(y))\" x2=\"\(SVGText.n(px))\" y2=\"\(SVGText.n(y + (t.labelled ? 6 : 3)))\"/>"
            if t.labelled {
                s += "<text x=\"\(SVGText.n(px))\" y=\"\(SVGText.n(y + 18))\" text-anchor=\"middle\">\(SVGText.e(SVGText.tick(t.value)))</text>"
            }
        }
        return s
    }

    private static func logAxisY(_ y: LogScale, left: Double, right: Double) -> String {
        var s = ""
        for t in y.ticks {
            let py = y.position(t.value)
            if t.labelled {
                s += "<line class=\"grid\" x1=\"\(SVGText.n(left))\" y1=\"\(SVGText.n(py))\" x2=\"\(SVGText.n(right))\" y2=\"\(SVGText.n(py))\"/>"
                s += "<text x=\"\(SVGText.n(left - 6))\" y=\"\(SVGText.n(py + 4))\" text-anchor=\"end\">\(SVGText.e(SVGText.tick(t.value)))</text>"
            } else {
                s += "<line class=\"axis\" x1=\"\(SVGText.n(left - 3))\" y1=\"\(SVGText.n(py))\" x2=\"\(SVGText.n(left))\" y2=\"\(SVGText.n(py))\"/>"
            }
        }
        s += "<line class=\"axis\" x1=\"\(SVGText.n(left))\" y1=\"\(SVGText.n(y.from))\" x2=\"\(SVGText.n(left))\" y2=\"\(SVGText.n(y.to))\"/>"
        return s
    }

    private static func countAxis(_ y: CountScale, left: Double, right: Double, label: String) -> String {
        var s = ""
        for t in y.ticks {
            let py = y.position(t)
            s += "<line class=\"grid\" x1=\"\(SVGText.n(left))\" y1=\"\(SVGText.n(py))\" x2=\"\(SVGText.n(right))\" y2=\"\(SVGText.n(py))\"/>"
            s += "<text x=\"\(SVGText.n(left - 6))\" y=\"\(SVGText.n(py + 4))\" text-anchor=\"end\">\(Int(t))</text>"
        }
        s += "<line class=\"axis\" x1=\"\(SVGText.n(left))\" y1=\"\(SVGText.n(y.from))\" x2=\"\(SVGText.n(left))\" y2=\"\(SVGText.n(y.to))\"/>"
        return s
    }

    /// Category labels under the x axis, thinned so that none overlaps the next.
    private static func categoryAxis(_ labels: [String], left: Double, step: Double, y: Double) -> String {
        var s =
            "<line class=\"axis\" x1=\"\(SVGText.n(left))\" y1=\"\(SVGText.n(y))\" x2=\"\(SVGText.n(left + step * Double(labels.count)))\" y2=\"\(SVGText.n(y))\"/>"
        let widest = Double(labels.map(\.count).max() ?? 1) * 6.2 + 12
        let every = Swift.max(1, Int((widest / step).rounded(.up)))
        for (i, label) in labels.enumerated() where i % every == 0 {
            let px = left + step * (Double(i) + 0.5)
            s += "<line class=\"axis\" x1=\"\(SVGText.n(px))\" y1=\"\(SVGText.n(y))\" x2=\"\(SVGText.n(px))\" y2=\"\(SVGText.n(y + 5))\"/>"
            s += "<text x=\"\(SVGText.n(px))\" y=\"\(SVGText.n(y + 18))\" text-anchor=\"middle\">\(SVGText.e(label))</text>"
        }
        return s
    }

    private static func deadlineLine(_ py: Double, left: Double, right: Double, micros: UInt64) -> String {
        "<line class=\"deadline\" x1=\"\(SVGText.n(left))\" y1=\"\(SVGText.n(py))\" x2=\"\(SVGText.n(right))\" y2=\"\(SVGText.n(py))\"/>"
            + "<text class=\"deadline\" x=\"\(SVGText.n(right - 4))\" y=\"\(SVGText.n(py - 5))\" text-anchor=\"end\">deadline \(SVGText.e(Micros.format(micros)))</text>"
    }
}
