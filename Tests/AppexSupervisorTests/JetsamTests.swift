import AppexCgroups
import AppexSupervisor
import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The memory governor with real processes and real memory (Docs/jetsam.md): footprint limits
/// (fatal, soft, active, inactive), the memory budget's pressure levels, and the kill order.
/// The probe's `allocate N` writes N MiB and holds them until it exits.
@Suite(.serialized) struct JetsamTests {
    static let mib: Int64 = 1_048_576

    static func memory(activeSoft: Int, activeHard: Int, inactiveSoft: Int, inactiveHard: Int, cache: Int = 32) -> [String] {
        [
            "memory:", "  activeSoftLimit: \(activeSoft)MiB", "  activeHardLimit: \(activeHard)MiB",
            "  inactiveSoftLimit: \(inactiveSoft)MiB", "  inactiveHardLimit: \(inactiveHard)MiB",
            "  pageCacheAllowance: \(cache)MiB",
        ]
    }

    func withFixture(_ f: SupervisorFixture, _ body: (SupervisorFixture) async throws -> Void) async throws {
        do { try await body(f) } catch {
            try await f.close()
            throw error
        }
        try await f.close()
    }

    func allocate(_ f: SupervisorFixture, _ id: String, _ mib: Int) async -> RequestOutcome? {
        await f.request(id, userInfo: LifecycleTests.action("allocate", String(mib))).outcome
    }

    /// Waits (bounded) until the kernel watches the instance's footprint lines: memory
    /// charged before that is caught only by the checks after arming and after answers.
    func waitUntilArmed(_ f: SupervisorFixture, _ id: String) async throws {
        for _ in 0..<1500 where !(await f.supervisor.footprintLimitsArmed(of: id)) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await f.supervisor.footprintLimitsArmed(of: id))
    }

    /// Waits (bounded) until `count` terminations are recorded.
    func terminations(_ f: SupervisorFixture, count: Int) async -> [TerminationRecord] {
        for _ in 0..<400 {
            let r = await f.supervisor.terminationRecords()
            if r.count >= count { return r }
            try? await Task.sleep(for: .milliseconds(25))
        }
        return await f.supervisor.terminationRecords()
    }

    // MARK: footprint limits

    /// Fatal active limit: appexd kills at the footprint limit (16 MiB), long before the
    /// kernel's backstop (16 + 32 MiB of page-cache allowance) would, and the host's
    /// interruption carries the kill record.
    @Test(.requiresRoot("needs root (cgroups, namespaces)")) func fatalActiveLimitKillsAtTheFootprintLimit() async throws {
        // A long idle timeout: on a loaded machine the test's own task may wait for a thread
        // longer than the fixture's 30 s, and the instance it watches must still be there.
        let f = try SupervisorFixture(
            policy: Self.memory(activeSoft: 12, activeHard: 16, inactiveSoft: 12, inactiveHard: 16)
                + ["idleTimeout: 10m"])
        try await withFixture(f) { f in
            let id = try await f.install(executable: LifecycleTests.probe, identifier: "dev.appex.tests.fatal")
            #expect(await allocate(f, id, 4)?.outcome == .completed)
            try await waitUntilArmed(f, id)
            let r = await f.request(id, userInfo: LifecycleTests.action("allocate", "24"))
            let o = try #require(r.outcome, "\(r)")
            #expect(o.outcome == .failed && o.reason == .perProcessLimit, "\(o)")
            let i = try #require(r.interruption)
            #expect(i.reason == .perProcessLimit)
            #expect(i.message?.contains("active limit of 16 MiB") == true, "\(i.message ?? "")")
            let footprint = try #require(i.footprintBytes)
            #expect(footprint >= UInt64(16 * Self.mib) && footprint < UInt64(40 * Self.mib), "killed at \(footprint)")
            #expect(i.triggerToDeathMicros != nil && i.band == 100)
            let record = try #require(await f.supervisor.terminationRecords().last)
            #expect(record.reason == .perProcessLimit && record.footprintBytes != nil && record.triggerToDeathMicros != nil)
        }
    }

    /// The inactive limit applies once the request is done: 20 MiB is within the active
    /// limit (32) and over the inactive one (12), so the idle instance dies.
    @Test(.requiresRoot("needs root (cgroups, namespaces)")) func inactiveLimitAppliesAfterTheRequest() async throws {
        let f = try SupervisorFixture(policy: Self.memory(activeSoft: 28, activeHard: 32, inactiveSoft: 8, inactiveHard: 12))
        try await withFixture(f) { f in
            let id = try await f.install(executable: LifecycleTests.probe, identifier: "dev.appex.tests.inactive")
            let o = try #require(await allocate(f, id, 20))
            #expect(o.outcome == .completed, "the active limit allows 20 MiB: \(o)")
            let records = await terminations(f, count: 1)
            let r = try #require(records.first)
            #expect(r.reason == .perProcessLimit)
            #expect(r.message.contains("inactive limit of 12 MiB"), "\(r.message)")
        }
    }

    /// Soft limit: a memory warning (the probe counts what its wire handler received), and
    /// no death without pressure.
    @Test(.requiresRoot("needs root (cgroups, namespaces)")) func softLimitWarnsAndDoesNotKill() async throws {
        let f = try SupervisorFixture(policy: Self.memory(activeSoft: 10, activeHard: 64, inactiveSoft: 10, inactiveHard: 64))
        try await withFixture(f) { f in
            let id = try await f.install(executable: LifecycleTests.probe, identifier: "dev.appex.tests.soft")
            #expect(await allocate(f, id, 14)?.outcome == .completed)
            let w = await f.request(id, userInfo: LifecycleTests.action("memory-warnings")).outcome?.items.first?.attributedContentText
            #expect(w?.hasPrefix("memory-warnings=1 ") == true, "\(w ?? "nil")")
            let list = await f.supervisor.jetsamReport()
            let entry = try #require(list.entries.first { $0.bundleIdentifier == id })
            #expect(entry.overSoftLimit && entry.footprintBytes >= UInt64(14 * Self.mib))
            #expect(await f.supervisor.terminationRecords().isEmpty)
        }
    }

    // MARK: pressure and victims

    /// lmkd's ladder, adapted: extensions in the idle (two), background and UI-support bands
    /// hold 16 MiB each; a foreground extension grows in steps that each cross the critical
    /// line of a 96 MiB budget. Each step kills exactly one victim, in order: lowest band
    /// first, and in a band the one in it longest. The kernel's OOM killer never acts.
    @Test(.requiresRoot("needs root (cgroups, namespaces)")) func ladderKillsByBandThenTimeInBand() async throws {
        let limits = Self.memory(activeSoft: 90, activeHard: 90, inactiveSoft: 90, inactiveHard: 90, cache: 8)
        let f = try SupervisorFixture(
            policy: limits + ["jetsamBand: foreground", "idleBand: foreground"],
            points: [
                "dev.appex.tests.idle": limits + ["jetsamBand: foreground", "idleBand: idle"],
                "dev.appex.tests.background": limits + ["jetsamBand: foreground", "idleBand: background"],
                "dev.appex.tests.ui": limits + ["jetsamBand: foreground", "idleBand: ui-support"],
            ], budget: 96 * Self.mib, agingDelay: .milliseconds(50))
        try await withFixture(f) { f in
            let p = LifecycleTests.probe
            let idleA = try await f.install(executable: p, identifier: "dev.appex.tests.a-idle", extensionPoint: "dev.appex.tests.idle")
            let idleB = try await f.install(executable: p, identifier: "dev.appex.tests.b-idle", extensionPoint: "dev.appex.tests.idle")
            let background = try await f.install(
                executable: p, identifier: "dev.appex.tests.c-background", extensionPoint: "dev.appex.tests.background")
            let ui = try await f.install(executable: p, identifier: "dev.appex.tests.d-ui", extensionPoint: "dev.appex.tests.ui")
            let grower = try await f.install(executable: p, identifier: "dev.appex.tests.e-foreground")
            for id in [idleA, idleB, background, ui] {
                #expect(await allocate(f, id, 16)?.outcome == .completed)
                try await Task.sleep(for: .milliseconds(120))  // past the aging delay: in its idle band
            }
            let bands = Dictionary(uniqueKeysWithValues: await f.supervisor.jetsamReport().entries.map { ($0.bundleIdentifier, $0.band) })
            #expect(bands == [idleA: 0, idleB: 0, background: 30, ui: 80], "\(bands)")
            #expect(await f.supervisor.pressureLevel() == .normal)

            var killed: [String] = []
            for (step, mib) in [24, 16, 16, 16].enumerated() {
                #expect(await allocate(f, grower, mib)?.outcome == .completed, "step \(step)")
                let records = await terminations(f, count: step + 1).filter { $0.reason == .memoryPressure }
                killed = records.map(\.bundleIdentifier)
                #expect(killed.count == step + 1, "step \(step): \(killed)")
            }
            #expect(killed == [idleA, idleB, background, ui])
            let records = await f.supervisor.terminationRecords()
            #expect(records.map(\.band) == [0, 0, 30, 80])
            #expect(records.allSatisfy { ($0.footprintBytes ?? 0) >= 15 * Self.mib && $0.triggerToDeathMicros != nil })
            // Warnings came first: the level passed through warning (or went to critical with
            // the warnings sent in the same evaluation), and the survivor was warned.
            let transitions = await f.supervisor.pressureTransitions()
            #expect(transitions.first?.to ?? .normal >= .warning, "\(transitions)")
            let w = await f.request(grower, userInfo: LifecycleTests.action("memory-warnings")).outcome?.items.first?.attributedContentText
            #expect(w.map { !$0.hasPrefix("memory-warnings=0 ") } == true, "\(w ?? "nil")")
            #expect(await f.supervisor.liveInstances(of: grower) == 1)
            // The kernel's OOM killer never had to act among these extensions: its limit on
            // the parent was never even reached (on v1 the parent's own oom_kill counts
            // nothing; the kernel counts a kill only in the victim's cgroup).
            let parent = try CgroupManager.detect(parentName: f.cgroupParent).parentCgroup()
            #expect(try parent.memoryEvents()["max", default: 0] == 0)
            #expect(!records.contains { $0.reason == .kernelOOM || $0.reason == .perProcessLimit })
        }
    }

    /// systemd-oomd's bloater and bystander, adapted: both in the same band, the bystander
    /// there longer. The bloater grows past its soft limit, which makes it the early victim;
    /// when the total crosses the critical line (90 of a 100 MiB budget) it dies, and the
    /// bystander lives, still holding its memory.
    @Test(.requiresRoot("needs root (cgroups, namespaces)")) func bloaterDiesBystanderLives() async throws {
        let f = try SupervisorFixture(
            policy: Self.memory(activeSoft: 24, activeHard: 80, inactiveSoft: 24, inactiveHard: 80, cache: 4)
                + ["idleBand: idle"], budget: 100 * Self.mib, agingDelay: .milliseconds(20))
        try await withFixture(f) { f in
            let bystander = try await f.install(executable: LifecycleTests.probe, identifier: "dev.appex.tests.bystander")
            let bloater = try await f.install(executable: LifecycleTests.probe, identifier: "dev.appex.tests.bloater")
            #expect(await allocate(f, bystander, 20)?.outcome == .completed)
            try await Task.sleep(for: .milliseconds(100))
            for mib in [12, 12, 12, 12] { #expect(await allocate(f, bloater, mib)?.outcome == .completed) }
            try await Task.sleep(for: .milliseconds(100))
            let order = await f.supervisor.jetsamReport().entries.map(\.bundleIdentifier)
            #expect(order == [bloater, bystander], "over its soft limit, the bloater leads the victim order: \(order)")
            #expect(await f.supervisor.terminationRecords().isEmpty, "68 MiB of 100: no kill yet")
            _ = await allocate(f, bloater, 24)  // 92 MiB: past the critical line
            let records = await terminations(f, count: 1)
            #expect(records.map(\.bundleIdentifier) == [bloater] && records.first?.reason == .memoryPressure, "\(records)")
            let kept = await allocate(f, bystander, 1)
            #expect(kept?.items.first?.attributedContentText == "allocated 1 MiB, holding 21 MiB", "\(String(describing: kept))")
            #expect(await f.supervisor.terminationRecords().count == 1)
            let parent = try CgroupManager.detect(parentName: f.cgroupParent).parentCgroup()
            #expect(try parent.memoryEvents()["max", default: 0] == 0, "the kernel's limit was never reached")
        }
    }
}
