import AppexSupervisor
import CoreMetrics
import Testing

@testable import AppexMetrics

/// The exposition format as appexd's backend writes it, read back by the tests' own strict
/// parser: label values that need escaping, HELP from the catalog, histogram buckets.
@Suite struct ExpositionFormatTests {
    /// A label value with a quote, a backslash and a line feed is written escaped and reads
    /// back unchanged; nothing else in it is touched.
    @Test func labelValuesAreEscaped() throws {
        let backend = MetricsBackend()
        let tricky = "a \"quoted\" C:\\path\nsecond line, {braces} = é"
        CoreMetrics.Counter(
            label: MetricCatalog.kills.name,
            dimensions: [("reason", tricky), ("band", "idle"), ("extension_point", "x")],
            factory: backend.factory
        ).increment(by: 3)
        let text = String(decoding: backend.registry.emitToBuffer(), as: UTF8.self)
        #expect(text.contains(#"reason="a \"quoted\" C:\\path\nsecond line, {braces} = é""#), "\(text)")
        let parsed = try Exposition.parse(text)
        let sample = try #require(parsed.samples(MetricCatalog.kills.name).first)
        #expect(sample.labels["reason"] == tricky)
        #expect(sample.value == 3)
        #expect(parsed.families[MetricCatalog.kills.name]?.help == MetricCatalog.kills.help)
        #expect(parsed.families[MetricCatalog.kills.name]?.type == "counter")
    }

    /// A timer becomes a histogram with the catalog's launch buckets, 25 µs to 5 s.
    @Test func launchHistogramBuckets() throws {
        let backend = MetricsBackend()
        let timer = CoreMetrics.Timer(
            label: MetricCatalog.launchDuration.name,
            dimensions: [("phase", "clone"), ("extension_point", "p"), ("start", "cold")],
            factory: backend.factory)
        for micros in [10, 30, 700, 40_000, 3_000_000, 9_000_000] { timer.recordMicroseconds(micros) }
        let parsed = try Exposition.parse(String(decoding: backend.registry.emitToBuffer(), as: UTF8.self))
        let buckets = parsed.samples(MetricCatalog.launchDuration.name + "_bucket", ["phase": "clone"])
        let bounds = buckets.compactMap { Exposition.parseValue($0.labels["le"]!) }
        #expect(bounds.first == 0.000025)
        #expect(bounds.dropLast().last == 5)
        #expect(bounds.last == .infinity)
        #expect(buckets.count == MetricCatalog.launchBuckets.count + 1)
        #expect(buckets.first?.value == 1, "10 µs is in the first bucket")
        #expect(buckets.last?.value == 6)
        #expect(parsed.sum(MetricCatalog.launchDuration.name + "_count") == 6)
        let sum = parsed.sum(MetricCatalog.launchDuration.name + "_sum")
        #expect(abs(sum - 12.04074) < 1e-9, "sum \(sum)")
    }

    /// The parser itself: it refuses what the format forbids.
    @Test(arguments: [
        ("no TYPE", "x 1\n"),
        ("no final line feed", "# TYPE x counter\nx 1"),
        ("TYPE after samples", "# TYPE x counter\nx 1\n# HELP x late\n"),
        ("interleaved families", "# TYPE x counter\nx{a=\"1\"} 1\n# TYPE y gauge\ny 2\nx{a=\"2\"} 1\n"),
        ("bad escape", "# TYPE x counter\nx{a=\"\\t\"} 1\n"),
        ("unterminated value", "# TYPE x counter\nx{a=\"1} 1\n"),
        ("label twice", "# TYPE x counter\nx{a=\"1\",a=\"2\"} 1\n"),
        ("series twice", "# TYPE x counter\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n"),
        ("bad metric name", "# TYPE 1x counter\n1x 1\n"),
        ("bad label name", "# TYPE x counter\nx{1a=\"1\"} 1\n"),
        ("negative counter", "# TYPE x counter\nx -1\n"),
        ("bad value", "# TYPE x gauge\nx one\n"),
        ("histogram without +Inf", "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n"),
        ("+Inf is not _count", "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n"),
        ("not cumulative", "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n"),
        ("buckets out of order", "# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n"),
        ("no _sum", "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n"),
    ])
    func parserRefuses(_ case_: (String, String)) {
        #expect(throws: (any Error).self, "\(case_.0)") { try Exposition.parse(case_.1) }
    }

    @Test func parserAccepts() throws {
        let text = """
            # HELP h A histogram with a \\\\ in its help.
            # TYPE h histogram
            h_bucket{k="v",le="0.5"} 1
            h_bucket{k="v",le="+Inf"} 2
            h_sum{k="v"} 1.5e+00
            h_count{k="v"} 2
            # some comment
            # TYPE g gauge
            g NaN
            g{a="x\\"y"} -Inf 1700000000000

            """
        let parsed = try Exposition.parse(text)
        #expect(parsed.families["h"]?.help == "A histogram with a \\ in its help.")
        #expect(parsed.sum("h_count") == 2)
        #expect(parsed.samples("g", ["a": "x\"y"]).first?.value == -.infinity)
    }

    @Test func processStatistics() throws {
        let stat = "4242 (appex (d) x) S 1 4242 4242 0 -1 4194560 2000 0 0 0 250 130 0 0 20 0 9 0 100 400000000 10000 18446744073709551615\n"
        let parsed = try #require(
            ProcessStatistics.parse(
                stat: stat, statm: "100000 10000 2000 10 0 50000 0\n",
                ticksPerSecond: 100, pageSize: 4096))
        #expect(parsed.cpuSeconds == 3.8)
        #expect(parsed.residentBytes == 10000 * 4096)
        let live = try #require(ProcessStatistics.read())
        #expect(live.residentBytes > 1 << 20)
    }
}
