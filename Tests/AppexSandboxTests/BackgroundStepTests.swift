import CAppexLinux
import Testing

@testable import AppexSandbox

/// The helper thread of `ExtensionRun.prepare` and `PreparedNetworkNamespace`.
@Suite struct BackgroundStepTests {
    struct Failed: Error, Equatable { var code: Int }

    @Test func joinReturnsTheStepsValueOrThrowsItsError() throws {
        let value = BackgroundStep.start { 6 * 7 }
        #expect(try value.join() == 42)
        let failing = BackgroundStep<Int>.start { throw Failed(code: 3) }
        #expect(throws: Failed(code: 3)) { try failing.join() }
    }

    /// The CPUs a step may start on: its creator's, less the one the creator is on; no
    /// narrowing when that would leave none or the creator's CPU is not among them.
    @Test func theStartingCPUsAreTheCreatorsLessItsOwn() {
        func mask(_ cpus: [Int]) -> cpu_set_t {
            var m = cpu_set_t()
            withUnsafeMutableBytes(of: &m) { b in for c in cpus { b[c / 8] |= UInt8(1) << (c % 8) } }
            return m
        }
        func cpus(_ m: cpu_set_t) -> [Int] {
            withUnsafeBytes(of: m) { b in (0..<(b.count * 8)).filter { b[$0 / 8] & (UInt8(1) << ($0 % 8)) != 0 } }
        }
        func elsewhere(_ allowed: [Int], here: Int32) -> [Int]? {
            var a = mask(allowed), out = mask([63])
            return appex_cpus_elsewhere(&a, here, &out) == 1 ? cpus(out) : nil
        }
        #expect(elsewhere([0, 1], here: 0) == [1])
        #expect(elsewhere([0, 1, 2, 3], here: 2) == [0, 1, 3])
        #expect(elsewhere([5, 9, 700], here: 700) == [5, 9])
        #expect(elsewhere([0], here: 0) == nil)
        #expect(elsewhere([0, 1], here: 2) == nil)
        #expect(elsewhere([0, 1], here: -1) == nil)
        #expect(elsewhere([0, 1], here: 1024) == nil)
    }

    /// Where a step runs: first on a CPU other than the one its creator was on (the point of
    /// the thread is the idle CPU, and the scheduler would often queue it behind its creator),
    /// then wherever its creator may run. An idle machine often places a new thread so on its
    /// own; the rule that makes it so under load is the test above. Needs two CPUs; CI's
    /// machines have them.
    @Test func aStepStartsOnAnotherCPUThenMayUseAllOfTheCreators() throws {
        let creatorsCPUs = Int(appex_allowed_cpu_count())
        try #require(creatorsCPUs >= 2, "this test needs two CPUs; the machine allows \(creatorsCPUs)")

        struct Seen: Sendable {
            var firstCPU: Int32
            var cpusAfter: Int
        }
        // The creator may itself move between asking where it is and starting the thread;
        // only an attempt during which it stayed on one CPU says anything.
        for _ in 0..<20 {
            let before = appex_current_cpu()
            let step = BackgroundStep.start {
                Seen(firstCPU: appex_current_cpu(), cpusAfter: Int(appex_allowed_cpu_count()))
            }
            let after = appex_current_cpu()
            let seen = try step.join()
            guard before == after else { continue }
            #expect(seen.firstCPU != before, "the step ran first on its creator's CPU \(before)")
            #expect(seen.cpusAfter == creatorsCPUs, "the step kept a narrowed affinity")
            return
        }
        Issue.record("the creating thread moved between CPUs in each of 20 attempts")
    }
}
