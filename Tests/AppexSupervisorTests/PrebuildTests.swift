import AppexSupervisor
import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Sandboxes built ahead (`SupervisorOptions.prebuildSandboxes`): built when an extension is
/// enabled and not before, entered by its first launch, and closed (the init killed and
/// reaped) by disable, uninstall and shutdown as a sandbox built by a launch is.
@Suite(.serialized) struct PrebuildTests {
    static let id = "dev.appex.tests.prebuild"

    func withFixture(prebuild: Bool, _ body: (SupervisorFixture) async throws -> Void) async throws {
        try RequiresRoot.check("sandboxes need root (namespaces, cgroups, uids)")
        let f = try SupervisorFixture(prebuildSandboxes: prebuild)
        do {
            try await body(f)
        } catch {
            try await f.close()
            throw error
        }
        try await f.close()
    }

    static func isRunning(_ pid: Int32) -> Bool { kill(pid, 0) == 0 }

    @Test func theFirstLaunchEntersTheSandboxBuiltAhead() async throws {
        try await withFixture(prebuild: true) { f in
            try await f.install(executable: LifecycleTests.probe, identifier: Self.id, enable: false)
            #expect(await f.supervisor.sandboxInitPID(of: Self.id) == nil, "a disabled extension gets no sandbox")
            _ = try await f.supervisor.enable(Self.id)
            let pid = try #require(await f.supervisor.sandboxInitPID(of: Self.id), "enabling builds it")
            #expect(Self.isRunning(pid))

            let first = await f.request(Self.id)
            #expect(first.outcome?.outcome == .completed && first.outcome?.cold == true, "\(first)")
            #expect(first.phase("view") == nil && first.phase("clone") != nil, "the launch only entered it")
            #expect(await f.supervisor.sandboxInitPID(of: Self.id) == pid, "the same sandbox")

            _ = try await f.supervisor.disable(Self.id)
            #expect(await f.supervisor.sandboxInitPID(of: Self.id) == nil)
            #expect(!Self.isRunning(pid), "disable killed and reaped its init")
        }
    }

    /// Uninstall right after enable: whatever order the build and the close meet on the
    /// extension's queue, nothing is left running.
    @Test func uninstallLeavesNoInitBehind() async throws {
        try await withFixture(prebuild: true) { f in
            try await f.install(executable: LifecycleTests.probe, identifier: Self.id)
            let pid = await f.supervisor.sandboxInitPID(of: Self.id)
            _ = try await f.supervisor.uninstall(Self.id, removeData: true)
            #expect(await f.supervisor.sandboxInitPID(of: Self.id) == nil)
            if let pid { #expect(!Self.isRunning(pid)) }
        }
    }

    @Test(.requiresRoot("sandboxes need root (namespaces, cgroups, uids)")) func shutdownClosesPrebuiltSandboxes() async throws {
        let f = try SupervisorFixture(prebuildSandboxes: true)
        try await f.install(executable: LifecycleTests.probe, identifier: Self.id)
        let pid = await f.supervisor.sandboxInitPID(of: Self.id)
        try await f.close()
        let built = try #require(pid)
        #expect(!Self.isRunning(built))
    }

    /// The option off (the default): nothing is built until the first launch, which reports
    /// the view it built.
    @Test func withoutTheOptionTheFirstLaunchBuildsIt() async throws {
        try await withFixture(prebuild: false) { f in
            try await f.install(executable: LifecycleTests.probe, identifier: Self.id)
            #expect(await f.supervisor.sandboxInitPID(of: Self.id) == nil)
            let first = await f.request(Self.id)
            #expect(first.outcome?.cold == true && first.phase("view") != nil, "\(first)")
            #expect(await f.supervisor.sandboxInitPID(of: Self.id) != nil)
        }
    }
}
