import AppexCgroups
import AppexRegistry
import AppexSupervisor
import AppexWire
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The history outlives its supervisor: a new Supervisor on the same state directory reads
/// the rows the first one wrote, unchanged, and adds its own after them.
@Suite(.serialized) struct HistoryRestartTests {
    @Test func aNewSupervisorReadsTheEarlierHistory() async throws {
        try #require(SupervisorFixture.isRoot, "launching needs root; CI runs as root")
        let f = try SupervisorFixture()
        let id = try await f.install(executable: LifecycleTests.probe, identifier: "dev.appex.tests.history-restart")
        // Two cold launches (the first instance ended in between), then the supervisor stops.
        #expect(await f.request(id).outcome?.cold == true)
        await f.supervisor.endIdleInstances(of: id)
        #expect(await f.request(id).outcome?.cold == true)
        await f.supervisor.shutdown()
        let before = try f.supervisor.registry.launches(of: id)
        #expect(before.count == 2)
        #expect(try f.supervisor.registry.terminations(of: id).map(\.reason) == ["shutdown", "idle-exit"])

        let second = try Supervisor(options: f.supervisor.options)
        second.start()
        func exercise() async throws {
            #expect(try second.registry.launches(of: id) == before, "the earlier launches, as they were written")
            #expect(try second.registry.requests(of: id).count == 2)
            #expect(await second.request(HostBeginRequest(requestID: 1, bundleIdentifier: id,
                                                          items: [ExtensionItem(attributedContentText: "again")])).outcome?.cold == true)
            second.flushHistory()
            let after = try second.registry.launches(of: id)
            #expect(after.count == 3)
            #expect(Array(after.dropFirst()) == before, "newest first: the new launch, then the earlier ones")
            #expect(after.first?.phaseMicroseconds["checkIn"] != nil)
        }
        do {
            try await exercise()
        } catch {
            await second.shutdown()
            throw error
        }
        await second.shutdown()
        #expect(try second.registry.terminations(of: id).first?.reason == "shutdown")

        // What SupervisorFixture.close would do, for a supervisor already shut down.
        let manager = try CgroupManager.detect(parentName: f.cgroupParent)
        for path in manager.parentPaths {
            #expect(!FileManager.default.fileExists(atPath: path), "cgroup parent left behind: \(path)")
            _ = rmdir(path)
        }
        try? FileManager.default.removeItem(atPath: f.root)
    }
}
