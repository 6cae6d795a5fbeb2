import Testing

@testable import AppexCgroups

#if canImport(Glibc)
import Glibc
#endif

struct ProcessCPUTimeTests {
    /// The command name is the process's to choose: parentheses and spaces in it must not
    /// shift the fields.
    @Test func fieldsAfterTheLastParenthesis() throws {
        let stat = "4242 (x) (y z) S 1 4242 4242 0 -1 4194560 2000 0 0 0 250 130 40 20 20 0 9 0 100 400000000 10000\n"
        #expect(ProcessCPUTime.micros(stat: stat, includingChildren: false, ticksPerSecond: 100) == 3_800_000)
        #expect(ProcessCPUTime.micros(stat: stat, includingChildren: true, ticksPerSecond: 100) == 4_400_000)
        #expect(ProcessCPUTime.micros(stat: "4242 (x) S 1 2", includingChildren: true, ticksPerSecond: 100) == nil)
        #expect(ProcessCPUTime.micros(stat: "no parenthesis", includingChildren: true, ticksPerSecond: 100) == nil)
    }

    @Test func liveProcess() throws {
        // Burn a little CPU so the count cannot be 0 by luck of the tick.
        var x: UInt64 = 1
        let start = MonotonicTime.now
        while MonotonicTime.now - start < 30_000_000 { x = x &* 6364136223846793005 &+ 1 }
        #expect(x != 0)
        #expect((ProcessCPUTime.micros(pid: getpid()) ?? 0) > 0)
        #expect(ProcessCPUTime.micros(pid: 0) == nil)
        #expect(ProcessCPUTime.micros(pid: Int32.max) == nil, "no such pid")
    }
}
