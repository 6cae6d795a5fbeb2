import AppexSupervisor
import Testing

/// The governor's pure rules: the pressure ladder's hysteresis and the victim order.
struct PressureRulesTests {
    static let mib: Int64 = 1_048_576
    let ladder = PressureLadder(budget: 100 * mib, availableFloor: 64 * mib)

    func step(_ from: PressureLevel, _ footprintMiB: Int64, available: Int64? = nil, signalled: PressureLevel = .normal) -> PressureLevel {
        ladder.next(from: from, .init(footprint: footprintMiB * Self.mib, available: available, signalled: signalled))
    }

    /// Up at 80 % and 90 %; down only below 85 % and 70 %: a total hovering at a line stays put.
    @Test func levelsRiseAtTheirLinesAndFallWellBelowThem() {
        #expect(step(.normal, 79) == .normal)
        #expect(step(.normal, 80) == .warning)
        #expect(step(.warning, 75) == .warning, "inside the hysteresis band")
        #expect(step(.warning, 69) == .normal)
        #expect(step(.warning, 90) == .critical)
        #expect(step(.normal, 95) == .critical, "a jump skips no rule")
        #expect(step(.critical, 86) == .critical, "inside the hysteresis band")
        #expect(step(.critical, 84) == .warning)
        #expect(step(.critical, 60) == .normal)
        // A walk up and down the same totals: the way down lags the way up.
        var level = PressureLevel.normal
        var seen: [PressureLevel] = []
        for f in [70, 78, 82, 88, 91, 88, 84, 78, 72, 68] as [Int64] {
            level = step(level, f)
            seen.append(level)
        }
        #expect(seen == [.normal, .normal, .warning, .warning, .critical, .critical, .warning, .warning, .warning, .normal])
    }

    @Test func memAvailableIsAFloorAndSignalsHoldTheirLevel() {
        #expect(step(.normal, 10, available: 63 * Self.mib) == .critical)
        #expect(step(.normal, 10, available: 100 * Self.mib) == .warning, "under twice the floor")
        #expect(step(.normal, 10, available: 200 * Self.mib) == .normal)
        #expect(step(.normal, 10, signalled: .warning) == .warning)
        #expect(step(.critical, 10, signalled: .critical) == .critical)
        let none = PressureLadder(budget: nil, availableFloor: 64 * Self.mib)
        #expect(none.next(from: .normal, .init(footprint: 1 << 40, available: nil)) == .normal, "no budget: the total alone never raises it")
        #expect(none.lines.isEmpty && ladder.lines == [70, 80, 85, 90].map { Int64(Double(100 * Self.mib) * Double($0) / 100) })
    }

    static func candidate(_ id: String, band: Int, since: UInt64, footprint: Int64 = 0, over: Bool = false, n: Int = 1) -> VictimOrder.Candidate {
        .init(bundleIdentifier: id, instance: n, band: band, bandSince: since, footprint: footprint, overSoftLimit: over)
    }

    @Test func victimsLowestBandFirstThenLongestInBand() {
        let all = [
            Self.candidate("fg", band: 100, since: 1), Self.candidate("idle-new", band: 0, since: 50),
            Self.candidate("bg", band: 30, since: 2), Self.candidate("idle-old", band: 0, since: 10),
        ]
        #expect(VictimOrder.longestInBand.sorted(all).map(\.bundleIdentifier) == ["idle-old", "idle-new", "bg", "fg"])
    }

    @Test func overTheSoftLimitGoesFirstAndLargestFootprintIsAnOption() {
        let all = [
            Self.candidate("small-old", band: 0, since: 1, footprint: 5),
            Self.candidate("big-new", band: 0, since: 9, footprint: 50),
            Self.candidate("fg-over", band: 100, since: 5, footprint: 10, over: true),
        ]
        #expect(VictimOrder.longestInBand.sorted(all).map(\.bundleIdentifier) == ["fg-over", "small-old", "big-new"])
        #expect(VictimOrder.largestFootprint.sorted(all).map(\.bundleIdentifier) == ["fg-over", "big-new", "small-old"])
    }
}
