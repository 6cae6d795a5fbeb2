import Testing

@testable import AppexSupervisor

/// The loop's timer heap: soonest first, ties in the order set, cancelled timers never run,
/// and cancelled entries do not pile up.
struct TimerQueueTests {
    final class Log { var fired: [Int] = [] }

    @Test func firesSoonestFirstAndTiesInOrderSet() {
        var q = TimerQueue()
        let log = Log()
        for (i, deadline) in [50, 10, 30, 10, 20, 10].enumerated() {
            _ = q.add(at: UInt64(deadline)) { log.fired.append(i) }
        }
        #expect(q.millisecondsUntilNext(now: 0) == 1, "10 ns away rounds up to 1 ms")
        while let body = q.popDue(now: 40) { body() }
        #expect(log.fired == [1, 3, 5, 4, 2])
        #expect(q.count == 1)
        #expect(q.popDue(now: 49) == nil)
        q.popDue(now: 50)?()
        #expect(log.fired.last == 0)
        #expect(q.millisecondsUntilNext(now: 60) == -1)
    }

    @Test func cancelledTimersNeverRunEvenWhenDueInTheSamePass() {
        var q = TimerQueue()
        let log = Log()
        var second: UInt64 = 0
        _ = q.add(at: 5) { log.fired.append(1) }
        second = q.add(at: 5) { log.fired.append(2) }
        _ = q.add(at: 7) { log.fired.append(3) }
        // The first body cancels the second, which is due in the same pass.
        var ran = 0
        while let body = q.popDue(now: 10) {
            body()
            ran += 1
            if ran == 1 { q.cancel(second) }
        }
        #expect(log.fired == [1, 3])
        q.cancel(second)  // twice: no effect
        #expect(q.count == 0)
    }

    /// A timer far in the future that is cancelled again and again (a warm request cancels an
    /// idle-exit timer due an hour later) must not grow the heap without bound.
    @Test func cancelledEntriesAreReclaimed() {
        var q = TimerQueue()
        let log = Log()
        _ = q.add(at: 1_000) { log.fired.append(0) }
        for i in 0..<100_000 {
            let id = q.add(at: UInt64(3_600_000_000_000 + i)) { log.fired.append(-1) }
            q.cancel(id)
        }
        #expect(q.count == 1)
        #expect(q.storedEntries <= 130, "stored \(q.storedEntries) entries for 1 live timer")
        while let body = q.popDue(now: .max) { body() }
        #expect(log.fired == [0])
    }

    /// Against a sorted reference, with random deadlines and cancellations.
    @Test func agreesWithASortedReference() {
        var q = TimerQueue()
        var reference: [(deadline: UInt64, id: UInt64, step: Int)] = []
        let log = Log()
        for step in 0..<5_000 {
            if !reference.isEmpty && Int.random(in: 0..<3) == 0 {
                q.cancel(reference.remove(at: Int.random(in: 0..<reference.count)).id)
            } else {
                let deadline = UInt64.random(in: 0..<1_000)
                let id = q.add(at: deadline) { log.fired.append(step) }
                reference.append((deadline, id, step))
            }
        }
        while let body = q.popDue(now: .max) { body() }
        let expected = reference.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }.map(\.step)
        #expect(log.fired == expected)
    }
}
