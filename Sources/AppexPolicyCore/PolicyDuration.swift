/// Durations in policies: `1s`, `500ms`, `30s`, `10m`, `1h`. A bare number is refused: the
/// unit is what people get wrong.
package enum PolicyDuration {
    package static func parse(_ text: String) -> Duration? {
        let t = text.trimmingBlanks()
        let units: [(String, Int64)] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000)]
        for (suffix, millis) in units where t.hasSuffix(suffix) {
            let number = t.dropLast(suffix.count).trimmingBlanks()
            guard !number.isEmpty, number.allSatisfy(\.isNumber), let n = Int64(number) else { return nil }
            let (product, overflow) = n.multipliedReportingOverflow(by: millis)
            return overflow ? nil : .milliseconds(product)
        }
        return nil
    }

    package static func format(_ d: Duration) -> String {
        let ms = d.milliseconds
        if ms % 3_600_000 == 0, ms > 0 { return "\(ms / 3_600_000)h" }
        if ms % 60_000 == 0, ms > 0 { return "\(ms / 60_000)m" }
        if ms % 1_000 == 0 { return "\(ms / 1_000)s" }
        return "\(ms)ms"
    }
}

extension Duration {
    /// Whole milliseconds, for limits written to the kernel and to JSON.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }
}
