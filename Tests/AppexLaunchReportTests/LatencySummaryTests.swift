import Testing

@testable import AppexLaunchReport

/// Percentiles are nearest-rank over the sorted samples: every figure printed is one measured.
@Suite struct LatencySummaryTests {
    @Test func percentilesAreNearestRankValuesOfTheSamples() {
        let s = LatencySummary((1...10).reversed().map { UInt64($0 * 100) })
        #expect(s.sorted == (1...10).map { UInt64($0 * 100) })
        #expect(s.p50 == 500)
        #expect(s.p90 == 900)
        #expect(s.p99 == 1000)
        #expect(s.percentile(10) == 100)
        #expect(s.percentile(11) == 200, "rank ceil(1.1) = 2")
        #expect(s.min == 100 && s.max == 1000 && s.count == 10)
        #expect(s.mean == 550)
    }

    @Test func oneSampleIsEveryPercentileAndNoneIsZero() {
        let one = LatencySummary([42])
        #expect(one.p50 == 42 && one.p99 == 42 && one.percentile(0.1) == 42)
        let none = LatencySummary([UInt64]())
        #expect(none.isEmpty && none.p99 == 0 && none.mean == 0 && none.max == 0)
    }

    @Test func jsonRoundsTheMeanAndCarriesEveryPercentile() {
        let json = LatencySummary([1, 2]).json
        #expect(json["count"] as? Int == 2)
        #expect(json["p50"] as? Int == 1)
        #expect(json["max"] as? Int == 2)
        #expect(json["mean"] as? Int == 2, "1.5 rounds to 2")
    }

    @Test(arguments: [
        (UInt64(0), "0 µs"), (999, "999 µs"), (1000, "1 ms"), (1500, "1.5 ms"), (12_340, "12.3 ms"),
        (123_400, "123 ms"), (1_000_000, "1 s"), (2_250_000, "2.25 s"),
    ])
    func microsAreWrittenInTheirUnit(us: UInt64, text: String) {
        #expect(Micros.format(us) == text)
    }

    @Test func percentOfNothingIsADash() {
        #expect(Micros.percent(1, of: 0) == "–")
        #expect(Micros.percent(31, of: 10_000) == "0.31 %")
        #expect(Micros.percent(1, of: 2) == "50 %")
    }

    @Test func durationsCountWholeMicroseconds() {
        #expect(Duration.seconds(1).wholeMicroseconds == 1_000_000)
        #expect(Duration.microseconds(1500).wholeMicroseconds == 1500)
        #expect(Duration.nanoseconds(1999).wholeMicroseconds == 1, "partial µs are dropped")
    }
}
