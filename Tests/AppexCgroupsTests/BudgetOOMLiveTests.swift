import Foundation
import Testing

@testable import AppexCgroups

#if canImport(Glibc)
import Glibc
#endif

/// Telling the kernel's two OOM kills apart on v1 (Docs/jetsam.md, "Kill records"): at the
/// extension's own limit (`per-process-limit`) or at the budget's, its parent's
/// (`kernel-oom`). Both with a shell holding 64 MiB, on the real kernel.
@Suite("budget limits and OOM kills, live v1", .serialized)
struct BudgetOOMLiveTests {
    static let hold64 = "v=$(head -c 67108864 /dev/zero | tr '\\0' a); echo ${#v}"

    /// Runs the 64 MiB shell in a child cgroup with `own` as its limit; returns the child's
    /// verdict after the kernel killed it.
    func oomKill(_ live: LiveV1, own: Int64) throws -> (killed: Bool, ownLimit: Bool, oomKills: Int) {
        let cg = try live.manager.create(name: "ext", limits: CgroupLimits(memoryMax: own, pidsMax: 16))
        let child = try GatedChild(Self.hold64)
        defer { child.stop() }
        try cg.addProcess(child.pid)
        child.release()
        let killed = child.wait() == .signal(SIGKILL)
        let verdict = (killed, cg.reachedOwnLimit(), try cg.oomKillCount())
        try cg.killAll()
        try cg.remove()
        return verdict
    }

    @Test func atItsOwnLimitTheKillIsItsOwn() throws {
        let live = try LiveV1("own-oom")
        defer { live.cleanup() }
        try live.manager.setBudgetLimits(hard: 256 * MiB, high: nil)
        let v = try oomKill(live, own: 16 * MiB)
        #expect(v.killed && v.oomKills >= 1)
        #expect(v.ownLimit, "killed at its own 16 MiB")
    }

    @Test func atTheBudgetsLimitTheKillIsTheKernelsNotItsOwn() throws {
        let live = try LiveV1("budget-oom")
        defer { live.cleanup() }
        try live.manager.setBudgetLimits(hard: 24 * MiB, high: nil)
        let parent = live.manager.parentCgroup()
        #expect(try parent.currentLimits().memoryMax == 24 * MiB)
        let v = try oomKill(live, own: 128 * MiB)
        #expect(v.killed && v.oomKills >= 1, "the parent's 24 MiB stopped it")
        #expect(!v.ownLimit, "its own limit, 128 MiB, was far away")
        // The parent's own limit refused charges (v1 counts the kill itself only in the
        // victim's cgroup, not in its parent's oom_kill).
        #expect(try parent.memoryEvents()["max", default: 0] >= 1)
    }
}
