import Foundation
import Testing

@testable import AppexLaunchReport

/// The plots' axes: a log axis from a 1-2-5 value below the smallest latency to one above the
/// largest, and a linear count axis on round steps.
@Suite struct SVGScaleTests {
    @Test func aLogScaleCoversItsRangeOnNiceValues() {
        let s = LogScale(covering: 80, 900_000, from: 0, to: 600)
        #expect(s.lo == 50, "80 / 1.15 = 69.6, floored to 50")
        #expect(s.hi == 2_000_000, "900k × 1.15 = 1.035M, ceiled to 2M")
        #expect(s.lo <= 80 && s.hi >= 900_000)
    }

    @Test func positionsAreLogarithmicAndClamped() {
        let s = LogScale(covering: 100, 10_000, from: 0, to: 300)
        // lo = 50, hi = 20000: equal ratios take equal distances.
        let a = s.position(100), b = s.position(1000), c = s.position(10_000)
        #expect(abs((b - a) - (c - b)) < 1e-9)
        #expect(s.position(s.lo) == 0 && s.position(s.hi) == 300)
        #expect(s.position(0) == 0, "a 0 µs phase sits on the axis")
        #expect(s.position(1e12) == 300)
    }

    @Test func anInvertedAxisRunsUpwards() {
        let s = LogScale(covering: 100, 10_000, from: 400, to: 100)
        #expect(s.position(s.lo) == 400 && s.position(s.hi) == 100)
        #expect(s.position(1000) < s.position(100))
    }

    @Test func aSingleValueStillGetsARange() {
        let s = LogScale(covering: 1, 1, from: 0, to: 1)
        #expect(s.hi > s.lo)
    }

    @Test func ticksAreOneTwoFiveAndLabelledSparinglyWhenMany() {
        let few = LogScale(covering: 100, 1000, from: 0, to: 1)
        #expect(few.ticks.map { $0.value } == [50, 100, 200, 500, 1000, 2000])
        #expect(few.ticks.allSatisfy { $0.labelled })
        let many = LogScale(covering: 10, 1_000_000, from: 0, to: 1)
        #expect(many.ticks.count > 9)
        #expect(many.ticks.first?.labelled == true)
        for t in many.ticks.dropFirst() {
            let mantissa = t.value / pow10(floorLog10(t.value))
            #expect(t.labelled == (abs(mantissa - 1) < 1e-9), "\(t.value)")
        }
    }

    @Test(arguments: [(7.0, 5.0, 10.0), (1.0, 1.0, 1.0), (1.5, 1.0, 2.0), (3.0, 2.0, 5.0), (120.0, 100.0, 200.0)])
    func niceFloorAndCeil(value: Double, floor: Double, ceil: Double) {
        #expect(LogScale.niceFloor(value) == floor)
        #expect(LogScale.niceCeil(value) == ceil)
    }

    @Test func countAxesStepRoundlyFromZero() {
        let s = CountScale(maximum: 37, from: 0, to: 100)
        #expect(s.step == 10 && s.max == 40)
        #expect(s.ticks == [0, 10, 20, 30, 40])
        #expect(s.position(20) == 50)
        let tiny = CountScale(maximum: 0, from: 0, to: 100)
        #expect(tiny.step == 1 && tiny.max == 1, "never below one")
    }

    @Test func svgNumbersAreFiniteWithOneDecimal() {
        #expect(SVGText.n(12.0) == "12")
        #expect(SVGText.n(12.34) == "12.3")
        #expect(SVGText.n(.nan) == "0" && SVGText.n(.infinity) == "0")
        #expect(SVGText.tick(50) == "50 µs")
        #expect(SVGText.tick(2000) == "2 ms")
        #expect(SVGText.tick(1_500_000) == "1.5 s")
        #expect(SVGText.e("<a & \"b\">") == "&lt;a &amp; &quot;b&quot;&gt;")
    }

    private func floorLog10(_ v: Double) -> Double { (log10(v) + 1e-9).rounded(.down) }
    private func pow10(_ e: Double) -> Double { pow(10, e) }
}
