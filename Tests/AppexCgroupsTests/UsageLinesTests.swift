import Testing

@testable import AppexCgroups

#if canImport(Glibc)
import Glibc
#endif

/// cgroup v2's usage lines: the rule (`UsageLines`) on numbers, and the timerfd watcher
/// (`ThresholdWatcher` over `UsagePoller`) on the fake cgroupfs.
@Suite("v2 usage lines")
struct UsageLinesTests {
    /// Readings in MiB, and for each whether it was reported as a crossing.
    static func reports(_ l: inout UsageLines, _ mib: [Int64]) -> [Bool] {
        mib.map { l.observe($0 * MiB) }
    }

    @Test func aLineCrossedIsReportedOnceEachWay() {
        var l = UsageLines([12 * MiB, 8 * MiB, 8 * MiB, 0])
        #expect(l.lines == [8 * MiB, 12 * MiB])
        // The first reading only says where the charge is; 7 after 13 is down across both
        // lines at once: one report.
        let r = Self.reports(&l, [2, 9, 10, 11, 13, 13, 7, 7])
        #expect(r == [false, true, false, false, true, false, true, false])
        #expect(l.reached == 0 && l.last == 7 * MiB)
    }

    @Test func aFirstReadingAboveALineIsNoCrossing() {
        var l = UsageLines([8 * MiB])
        #expect(Self.reports(&l, [9]) == [false] && l.reached == 1)
        #expect(Self.reports(&l, [1]) == [true])
    }

    @Test func theNextLookComesSoonerTheNearerTheNextLineUp() {
        let l = UsageLines([8 * MiB, 512 * MiB])
        // The time the assumed growth takes to reach the next line, within the bounds.
        #expect(l.interval(after: 8 * MiB) == .milliseconds(500) - Self.growthTime(8 * MiB))
        let far = l.interval(after: 100 * MiB), near = l.interval(after: 500 * MiB)
        #expect(far > near && near > UsageLines.shortest)
        #expect(l.interval(after: 511 * MiB) == UsageLines.shortest)
        #expect(l.interval(after: 7 * MiB + 1000 * 1024) == UsageLines.shortest)
        #expect(l.interval(after: 600 * MiB) == UsageLines.longest)  // only a fall is left to see
        #expect(UsageLines([64 << 30]).interval(after: 0) == UsageLines.longest)
    }

    /// What `UsageLines.assumedGrowth` adds in `bytes`.
    static func growthTime(_ bytes: Int64) -> Duration {
        .nanoseconds(Int64(Double(bytes) / Double(UsageLines.assumedGrowth) * 1e9))
    }

    @Test func movedLinesJudgeTheLastReadingSilently() {
        var l = UsageLines([8 * MiB])
        #expect(Self.reports(&l, [10]) == [false])
        l.move(to: [26 * MiB, 34 * MiB])
        #expect(l.reached == 0 && l.interval(after: 10 * MiB) == Self.growthTime(16 * MiB))
        #expect(Self.reports(&l, [12, 27]) == [false, true] && l.reached == 1)
        l.move(to: [4 * MiB])
        #expect(l.reached == 1 && Self.reports(&l, [27]) == [false])
    }

    @Test func theV2WatcherReportsOnlyCrossings() throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits(memoryMax: 64 * MiB))
        let w = try cg.makeThresholdWatcher(lines: [12 * MiB, 8 * MiB])
        #expect(w.bytes == 8 * MiB && w.lines == [8 * MiB, 12 * MiB])
        #expect(try Self.nextLook(w) == false)  // 0: below both, as at the start
        try fake.put("appex/x/memory.current", "\(9 * MiB)\n")
        #expect(try Self.nextLook(w) == true)
        #expect(try Self.nextLook(w) == false)  // still past 8 MiB: told once
        try fake.put("appex/x/memory.current", "\(13 * MiB)\n")
        #expect(try Self.nextLook(w) == true)
        try fake.put("appex/x/memory.current", "\(5 * MiB)\n")
        #expect(try Self.nextLook(w) == true)
        #expect(try Self.nextLook(w) == false)
    }

    @Test func theV2WatcherLooksSoonerNearALine() throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits())
        let w = try cg.makeThresholdWatcher(lines: [4 << 30])
        let poller = try #require(w.poller)
        #expect(poller.armed == UsageLines.longest)  // 0 of 4 GiB
        try fake.put("appex/x/memory.current", "\((4 << 30) - 64 * MiB)\n")
        _ = try Self.nextLook(w)
        #expect(poller.armed == Self.growthTime(64 * MiB))
        try fake.put("appex/x/memory.current", "\((4 << 30) - 1 * MiB)\n")
        _ = try Self.nextLook(w)
        #expect(poller.armed == UsageLines.shortest)
    }

    @Test func theV2WatcherIsReArmedWhenItsLinesMove() throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits())
        try fake.put("appex/x/memory.current", "\(9 * MiB)\n")
        let w = try cg.makeThresholdWatcher(lines: [4 << 30])
        let poller = try #require(w.poller)
        #expect(poller.armed == UsageLines.longest)
        #expect(w.move(to: [8 * MiB]))
        #expect(w.lines == [8 * MiB] && poller.armed == .nanoseconds(1))  // looks at once
        #expect(try Self.nextLook(w) == false)  // already past the moved line: not a crossing
        try fake.put("appex/x/memory.current", "\(7 * MiB)\n")
        #expect(try Self.nextLook(w) == true)
    }

    /// A victim killed and its neighbour growing, both between two looks: the watcher's own
    /// readings would show no crossing; the reading the governor took between them does.
    @Test func aReadingTheCallerTookCountsForTheNextCrossing() throws {
        let fake = try FakeCgroup2()
        let cg = try fake.manager().create(name: "x", limits: CgroupLimits())
        try fake.put("appex/x/memory.current", "\(600 * MiB)\n")
        let w = try cg.makeThresholdWatcher(lines: [512 * MiB])
        let poller = try #require(w.poller)
        #expect(poller.armed == UsageLines.longest)  // above its only line
        w.sync(usage: 100 * MiB)
        #expect(poller.armed == Self.growthTime(412 * MiB))
        #expect(try Self.nextLook(w) == true)  // 600 again: up across the line
    }

    /// Waits until the watcher's descriptor is readable, as the supervisor's loop does, then
    /// acknowledges it: whether that look crossed a line. The bound only keeps a broken timer
    /// from hanging the suite.
    static func nextLook(_ w: ThresholdWatcher) throws -> Bool {
        let r = try Sys.poll([(w.fd, Int16(POLLIN))], timeoutMs: 10_000)
        try #require(r[0] & Int16(POLLIN) != 0, "the watcher's timer never fired")
        return w.acknowledge()
    }
}
