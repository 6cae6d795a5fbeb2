import Foundation
import Testing

@testable import AppexCgroups

#if canImport(Glibc)
import Glibc
#endif

/// Why the live v2 test cannot run here, or nil when a v2 memory controller exists.
/// The only allowed reason is the absence of the controller; privileges are never a reason.
let liveV2Reason: String? = {
    do { return try CgroupManager.probe().v2MemoryReason } catch { return "cannot read mountinfo: \(error)" }
}()

@Suite("cgroup v2 backend, live")
struct LiveV2Tests {
    @Test(.enabled(if: liveV2Reason == nil, Comment(rawValue: "no live v2 memory controller: \(liveV2Reason ?? "")")))
    func oomKillLimitsAndCleanupOnARealUnifiedHierarchy() throws {
        let m = try CgroupManager.detect(parentName: Names.unique("v2"))
        try #require(m.version == .v2)
        defer {
            _ = try? m.cleanupLeftovers()
            try? m.removeParent()
        }
        let limits = CgroupLimits(memoryMax: 16 * MiB, memoryHigh: 12 * MiB, pidsMax: 16)
        let cg = try m.create(name: "ext", limits: limits)
        var back = try cg.currentLimits()
        back.swapOff = limits.swapOff
        #expect(back == limits)

        // memory.high throttles the charger above it (v1's soft limit never does): a shell
        // growing past 12 MiB would crawl towards 16 MiB for minutes instead of being
        // OOM-killed. Lifted once read back, so the kill below is the hard limit's.
        try Sys.writeFile(cg.file("memory.high"), "max")

        let fds = try cg.openJoinFDs()
        fds.forEach { close($0) }
        #expect(fds.count == 1)

        let watcher = try cg.makeOOMWatcher()
        let child = try GatedChild("v=$(head -c 67108864 /dev/zero | tr '\\0' a); echo ${#v}")
        defer { child.stop() }
        try cg.addProcess(child.pid)
        child.release()
        #expect(child.wait() == .signal(SIGKILL))
        let n = try watcher.wait(timeout: .seconds(10))
        #expect(n != nil && n! >= 1)
        #expect(try cg.memoryPeak() >= 15 * MiB)
        try cg.killAll()
        try cg.remove()
        #expect(!cg.exists)
    }

    /// Records, in the test log, why the live v2 test did or did not run on this host.
    @Test func reportLiveV2Availability() throws {
        if let reason = liveV2Reason {
            print("live cgroup v2 test not run: \(reason)")
        }
        // The probe itself must work everywhere.
        _ = try CgroupManager.probe()
    }
}
