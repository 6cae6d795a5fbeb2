import AppexSupervisor
import AppexTestSupport
import AppexWire
import Testing

/// Liveness as documented (Docs/supervisor.md): a busy instance is pinged every
/// `pingInterval` whatever is still unanswered, so a hang is found within
/// `pingInterval + unresponsiveTimeout`, not `2 × unresponsiveTimeout` as when one ping at a
/// time was out. Judged against appexd's own request timer, not the wall clock.
@Suite(.serialized) struct LivenessTests {
    /// pingInterval 200 ms, unresponsiveTimeout 2 s, requestTimeout 3 s: a hang from the start
    /// of a request is unanswered from the first ping (≤ 0.2 s) and found at ≤ 2.2 s, before
    /// the request times out. With one ping out at a time (every 2 s), the first pong would
    /// have been due at 4 s, and the request timeout would have ended it.
    @Test(.requiresRoot("the life cycle needs root (namespaces, cgroups, uids)")) func aHangIsFoundWithinThePingIntervalPlusTheTimeout() async throws
    {
        let f = try SupervisorFixture(policy: [
            "pingInterval: 200ms", "unresponsiveTimeout: 2s", "requestTimeout: 3s",
            "idlePingInterval: 60s",
        ])
        do {
            let id = try await f.install(executable: LifecycleTests.probe, identifier: "dev.appex.tests.liveness")
            let r = await f.request(id, userInfo: LifecycleTests.action("hang"))
            let o = try #require(r.outcome)
            #expect(o.outcome == .failed && o.reason == .unresponsive, "\(o)")
            #expect(await f.supervisor.terminationRecords().map(\.reason) == [.unresponsive])
        } catch {
            try await f.close()
            throw error
        }
        try await f.close()
    }

    /// Several pings out at once are answered in order: an instance that is slow to answer
    /// but answers (a 1.5 s sleep that serves pings meanwhile) is never taken for hung.
    @Test(.requiresRoot("the life cycle needs root (namespaces, cgroups, uids)")) func pingsAnsweredInOrderKeepABusyInstanceAlive() async throws {
        let f = try SupervisorFixture(policy: ["pingInterval: 100ms", "unresponsiveTimeout: 500ms", "requestTimeout: 5s"])
        do {
            let id = try await f.install(executable: LifecycleTests.probe, identifier: "dev.appex.tests.liveness-ok")
            let r = await f.request(id, userInfo: LifecycleTests.action("sleep", "1500"))
            #expect(r.outcome?.outcome == .completed, "\(String(describing: r.outcome))")
            #expect(await f.supervisor.terminationRecords().isEmpty)
        } catch {
            try await f.close()
            throw error
        }
        try await f.close()
    }
}
