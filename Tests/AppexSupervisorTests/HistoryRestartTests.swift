import AppexCgroups
import AppexRegistry
import AppexSupervisor
import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The history outlives its supervisor: a new Supervisor on the same state directory reads
/// the rows the first one wrote, unchanged, and adds its own after them.
@Suite struct HistoryRestartTests {
    static let identifier = "dev.appex.tests.history-restart"

    /// Uids and a cgroup parent of its own: LifecycleTests runs beside this suite. The overlay
    /// (`writeOverlay`) keeps an idle instance until the test ends it: each end is then the one
    /// the test chose, however slowly a loaded machine runs it.
    static func options(root: String) -> SupervisorOptions {
        SupervisorOptions(
            stateDirectory: root + "/state", policyOverlays: [root + "/policies"],
            cgroupParent: "appexd-history-tests-\(getpid())",
            uidRange: 323_000...323_999, terminateGrace: .milliseconds(500))
    }

    static func writeOverlay(root: String) throws {
        try FileManager.default.createDirectory(atPath: root + "/policies/extension-points", withIntermediateDirectories: true)
        try SupervisorFixture.write(
            """
            extensionPoints: [com.apple.widgetkit-extension]
            title: history tests, an idle instance stays until ended
            idleTimeout: 10m

            """, to: root + "/policies/extension-points/widgetkit.yaml")
    }

    static func request(_ supervisor: Supervisor, id: UInt64) async -> RequestOutcome? {
        await supervisor.request(
            HostBeginRequest(
                requestID: id, bundleIdentifier: identifier,
                items: [ExtensionItem(attributedContentText: "history")])
        ).outcome
    }

    @Test(.requiresRoot("launching needs root")) func aNewSupervisorReadsTheEarlierHistory() async throws {
        let root = try ScratchDirectory.make("sup", mode: 0o755)
        defer { try? ScratchDirectory.removeTree(root) }
        try Self.writeOverlay(root: root)
        let bundle = root + "/src/Probe.appex"
        try BareBundle.write(at: bundle, executable: "probe", from: LifecycleTests.probe, identifier: Self.identifier, version: "7")

        // The first supervisor: two cold launches (the first instance ended in between), then
        // it stops.
        let first = try Supervisor(options: Self.options(root: root))
        first.start()
        do {
            _ = try await first.install(path: bundle)
            _ = try await first.enable(Self.identifier)
            #expect(await Self.request(first, id: 1)?.cold == true)
            await first.endIdleInstances(of: Self.identifier)
            #expect(await Self.request(first, id: 2)?.cold == true)
        } catch {
            await first.shutdown()
            throw error
        }
        await first.shutdown()
        let before = try first.registry.launches(of: Self.identifier)
        #expect(before.count == 2 && before.allSatisfy { $0.version == "7" })
        #expect(try first.registry.terminations(of: Self.identifier).map(\.reason) == ["supervisor-shutdown", "idle-exit"])

        // The second, on the same state directory.
        let second = try Supervisor(options: Self.options(root: root))
        second.start()
        do {
            #expect(try second.registry.launches(of: Self.identifier) == before, "the earlier launches, as they were written")
            #expect(try second.registry.requests(of: Self.identifier).count == 2)
            #expect(await Self.request(second, id: 1)?.cold == true)
            second.flushHistory()
            let after = try second.registry.launches(of: Self.identifier)
            #expect(after.count == 3)
            #expect(Array(after.dropFirst()) == before, "newest first: the new launch, then the earlier ones")
            #expect(after.first?.phaseMicroseconds["checkIn"] != nil)
        } catch {
            await second.shutdown()
            throw error
        }
        await second.shutdown()
        #expect(try second.registry.terminations(of: Self.identifier).map(\.reason) == ["supervisor-shutdown", "supervisor-shutdown", "idle-exit"])

        let manager = try CgroupManager.detect(parentName: Self.options(root: root).cgroupParent)
        for path in manager.parentPaths {
            #expect(!FileManager.default.fileExists(atPath: path), "cgroup parent left behind: \(path)")
            _ = rmdir(path)
        }
    }
}
