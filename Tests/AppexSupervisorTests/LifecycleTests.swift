import AppexRegistry
import AppexSupervisor
import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The request life cycle end to end, as root, with the real probe extension under the real
/// sandbox: request → launch → check-in → answer, and each way an instance can end.
@Suite(.serialized) struct LifecycleTests {
    static var probe: String { BuiltProducts.path("appex-probe-extension") }

    static func action(_ name: String, _ arg: String? = nil) -> [String: UserInfoValue] {
        var info: [String: UserInfoValue] = ["probe.action": .string(name)]
        if let arg { info["probe.arg"] = .string(arg) }
        return info
    }

    func withProbe(
        policy: [String] = [], conf: String? = nil, rule: String? = nil,
        _ body: (SupervisorFixture, String) async throws -> Void
    ) async throws {
        try RequiresRoot.check("the life cycle needs root (namespaces, cgroups, uids)")
        let f = try SupervisorFixture(policy: policy)
        do {
            let id = try await f.install(
                executable: Self.probe, identifier: "dev.appex.tests.probe",
                activationRule: rule, files: conf.map { ["probe.conf": $0] } ?? [:])
            try await body(f, id)
        } catch {
            try await f.close()
            throw error
        }
        try await f.close()
    }

    @Test func requestCompletesColdThenWarm() async throws {
        try await withProbe { f, id in
            let first = await f.request(id, text: "ping me")
            let o1 = try #require(first.outcome, "\(first)")
            #expect(o1.outcome == .completed)
            #expect(o1.items.first?.attributedContentText == "ping me")
            #expect(o1.cold)
            #expect(first.phase("checkIn") != nil && first.phase("roundTrip") != nil && first.phase("spawn") != nil)

            let second = await f.request(id, text: "again")
            let o2 = try #require(second.outcome)
            #expect(o2.outcome == .completed && !o2.cold, "the second request reuses the warm instance")
            #expect(second.phase("checkIn") == nil && second.phase("spawn") == nil)
            #expect(await f.supervisor.liveInstances(of: id) == 1)
            #expect(await f.supervisor.terminationRecords().isEmpty)
        }
    }

    /// Each outcome carries the instance's peak memory: it grows with what the extension
    /// touched (the probe allocates and writes 12 MiB on the second request).
    @Test func outcomesReportPeakMemory() async throws {
        try await withProbe { f, id in
            let first = try #require(await f.request(id).outcome)
            let small = try #require(first.peakMemoryBytes, "\(first)")
            #expect(small > 0)
            let grown = try #require(await f.request(id, userInfo: Self.action("allocate", "12")).outcome)
            #expect(grown.items.first?.attributedContentText?.hasPrefix("allocated 12 MiB") == true, "\(grown)")
            let peak = try #require(grown.peakMemoryBytes)
            // The high-water mark holds the 12 MiB (pages the first request charged may be
            // reused, so not necessarily on top of them).
            #expect(peak >= 12 * 1_048_576 && peak > small, "peak \(peak) after 12 MiB, first \(small)")
        }
    }

    /// A memory warning when the footprint reaches 80 % of the active limit (25.6 of 32 MiB
    /// by default), once per crossing, and none below it.
    @Test func memoryWarningAtEightyPercentOfTheActiveLimit() async throws {
        try await withProbe { f, id in
            func warnings() async -> String? {
                await f.request(id, userInfo: Self.action("memory-warnings")).outcome?.items.first?.attributedContentText
            }
            #expect(await f.request(id, userInfo: Self.action("allocate", "8")).outcome?.outcome == .completed)
            #expect(await warnings()?.hasPrefix("memory-warnings=0 ") == true, "8 MiB is below the line")
            #expect(await f.request(id, userInfo: Self.action("allocate", "20")).outcome?.outcome == .completed)
            #expect(await warnings()?.hasPrefix("memory-warnings=1 ") == true, "28 MiB is past it")
            #expect(await f.request(id, userInfo: Self.action("allocate", "1")).outcome?.outcome == .completed)
            #expect(await warnings()?.hasPrefix("memory-warnings=1 ") == true, "still past it: no second warning")
        }
    }

    /// Launches, requests and terminations land in the registry database, where a new
    /// supervisor on the same state directory finds them.
    @Test func historySurvivesTheSupervisor() async throws {
        try await withProbe { f, id in
            #expect(await f.request(id).outcome?.cold == true)
            #expect(await f.request(id, userInfo: Self.action("crash")).outcome?.reason == .crashed)
            f.supervisor.flushHistory()
            let launches = try f.supervisor.registry.launches(of: id)
            #expect(launches.count == 1)
            #expect(launches.first?.phaseMicroseconds["checkIn"] != nil && launches.first?.phaseMicroseconds["spawn"] != nil)
            #expect(try f.supervisor.registry.requests(of: id).map(\.outcome) == ["failed", "completed"])
            #expect(try f.supervisor.registry.terminations(of: id).map(\.reason) == ["crashed"])
            let reopened = try Registry(stateDirectory: f.root + "/state")
            #expect(try reopened.requests(of: id).first?.reason == "crashed")
        }
    }

    @Test func cancelWithAnError() async throws {
        try await withProbe { f, id in
            let r = await f.request(id, userInfo: Self.action("cancel", "42"))
            let o = try #require(r.outcome)
            #expect(o.outcome == .cancelled)
            #expect(o.error?.domain == "dev.appex.probe" && o.error?.code == 42)
        }
    }

    /// A host that goes away: its request still waiting ends cancelled at once, the one at the
    /// instance ends too, and another host's request queued behind them is served. The
    /// supervisor forgets every request once it has ended.
    @Test func aHostThatGoesAwayCancelsOnlyItsOwnRequests() async throws {
        try await withProbe { f, id in
            let gone = RecordingSink(), other = RecordingSink()
            let sleep = [AppexWire.ExtensionItem(attributedContentText: "x", userInfo: Self.action("sleep", "5000"))]
            let echo = [AppexWire.ExtensionItem(attributedContentText: "echo")]
            // One instance at most (the defaults): request 1 launches it, 2 and 3 wait.
            let admitted = await f.supervisor.onLoop { s in
                [
                    s.begin(HostBeginRequest(requestID: 1, bundleIdentifier: id, items: sleep), descriptors: [], sink: gone),
                    s.begin(HostBeginRequest(requestID: 2, bundleIdentifier: id, items: echo), descriptors: [], sink: gone),
                    s.begin(HostBeginRequest(requestID: 1, bundleIdentifier: id, items: echo), descriptors: [], sink: other),
                ]
                .map { $0 == nil }
            }
            #expect(admitted == [true, true, true])
            #expect(await f.supervisor.openRequestCount() == 3)
            await f.supervisor.onLoop { $0.sinkClosed(gone) }
            // The waiting one has ended by the time the loop is done with the host's going away.
            let waiting = try #require(gone.outcomes.value.first { $0.requestID == 2 }, "the waiting request did not end when its host went away")
            #expect(waiting.requestID == 2 && waiting.outcome == .cancelled, "\(waiting)")
            #expect(waiting.error?.message == "cancelled by the host")
            // The other host's request, the same id as the gone host's first: served.
            let served = try #require(await other.outcome(1))
            #expect(served.outcome == .completed && served.items.first?.attributedContentText == "echo", "\(served)")
            #expect(await gone.outcome(1) != nil)
            #expect(other.outcomes.value.count == 1 && gone.outcomes.value.count == 2)
            #expect(await f.supervisor.openRequestCount() == 0)
        }
    }

    @Test func openURLReachesTheHost() async throws {
        try await withProbe { f, id in
            let seen = Locked<[String]>([])
            let r = await f.request(id, userInfo: Self.action("open-url", "https://example.org/x")) { url in
                seen.mutate { $0.append(url) }
                return true
            }
            #expect(r.outcome?.items.first?.attributedContentText == "accepted")
            #expect(seen.value == ["https://example.org/x"])
            let refused = await f.request(id, userInfo: Self.action("open-url", "https://example.org/y"))
            #expect(refused.outcome?.items.first?.attributedContentText == "refused")
        }
    }

    @Test func launchDeadlineMissIsKilledWithLaunchTimeout() async throws {
        try await withProbe(policy: ["launchDeadline: 500ms"], conf: "sleep-before-checkin-ms=5000\n") { f, id in
            let r = await f.request(id)
            let o = try #require(r.outcome, "\(r)")
            #expect(o.outcome == .failed)
            #expect(o.reason == .launchTimeout)
            let records = await f.supervisor.terminationRecords()
            #expect(records.map(\.reason) == [.launchTimeout])
            // The kill record: the point's band, the footprint at the decision, and how long
            // the kernel took from the decision to the process being gone.
            let record = try #require(records.first)
            #expect(record.band == 100, "the defaults' foreground band")
            #expect((record.footprintBytes ?? 0) > 0)
            #expect(record.triggerToDeathMicros != nil)
            f.supervisor.flushHistory()
            let row = try #require(try f.supervisor.registry.terminations(of: id).first)
            #expect(row.reason == "launch-timeout" && row.band == 100 && row.footprintBytes == record.footprintBytes)
            #expect(row.triggerToDeathMicros == record.triggerToDeathMicros.map { Int64($0) })
        }
    }

    @Test func requestTimeoutWarnsThenKills() async throws {
        // requestTimeout 4 s: will-expire at 3 s (a quarter before, at most 5 s).
        try await withProbe(policy: ["requestTimeout: 4s"]) { f, id in
            let answered = await f.request(id, userInfo: Self.action("sleep", "3500"))
            #expect(answered.outcome?.outcome == .completed, "answered after the warning, before the timeout")
            let counts = await f.request(id, userInfo: Self.action("memory-warnings"))
            #expect(
                counts.outcome?.items.first?.attributedContentText?.contains("will-expire=1") == true,
                "\(String(describing: counts.outcome))")

            let late = await f.request(id, userInfo: Self.action("sleep", "60000"))
            let o = try #require(late.outcome)
            #expect(o.outcome == .failed && o.reason == .requestTimeout)
            #expect(late.interruption?.reason == .requestTimeout)
        }
    }

    @Test func crashFailsTheRequestWithTheSignal() async throws {
        try await withProbe { f, id in
            let r = await f.request(id, userInfo: Self.action("crash"))
            let o = try #require(r.outcome)
            #expect(o.outcome == .failed && o.reason == .crashed)
            #expect(r.interruption?.signal == SIGSEGV)
            // The next request gets a fresh instance.
            let next = await f.request(id)
            #expect(next.outcome?.outcome == .completed && next.outcome?.cold == true)
        }
    }

    @Test func hungExtensionIsKilledAsUnresponsive() async throws {
        try await withProbe { f, id in
            let r = await f.request(id, userInfo: Self.action("hang"))
            let o = try #require(r.outcome)
            #expect(o.outcome == .failed && o.reason == .unresponsive, "\(o)")
        }
    }

    /// An idle instance is pinged every `idlePingInterval`, not every `pingInterval`: one that
    /// stops answering pings after its request lives past when a busy one would have been
    /// killed, and is killed as `unresponsive` at its idle ping.
    @Test func idleInstancesArePingedAtTheIdleInterval() async throws {
        try await withProbe(policy: ["pingInterval: 200ms", "unresponsiveTimeout: 300ms", "idlePingInterval: 3s"]) { f, id in
            let r = await f.request(id, userInfo: Self.action("ignore-pings"))
            #expect(r.outcome?.outcome == .completed, "\(String(describing: r.outcome))")
            // Busy pings (every 300 ms, 300 ms to answer) would have killed it by now.
            try await Task.sleep(for: .milliseconds(1500))
            #expect(await f.supervisor.liveInstances(of: id) == 1, "an idle instance was pinged at the busy interval")
            var waited = 0
            while await f.supervisor.liveInstances(of: id) > 0 && waited < 300 {
                try await Task.sleep(for: .milliseconds(50))
                waited += 1
            }
            #expect(await f.supervisor.terminationRecords().map(\.reason) == [.unresponsive])
        }
    }

    /// A request to an idle instance brings its next ping within `pingInterval`: a hang while
    /// serving is found by the pings, not left to the request timeout.
    @Test func aRequestBringsTheIdlePingBack() async throws {
        try await withProbe(policy: [
            "pingInterval: 200ms", "unresponsiveTimeout: 300ms", "idlePingInterval: 60s",
            "requestTimeout: 20s",
        ]) { f, id in
            #expect(await f.request(id).outcome?.outcome == .completed)
            let r = await f.request(id, userInfo: Self.action("hang"))
            let o = try #require(r.outcome)
            #expect(o.outcome == .failed && o.reason == .unresponsive, "\(o)")
        }
    }

    @Test func idleInstancesEndOnDemandAndTheNextRequestIsCold() async throws {
        try await withProbe { f, id in
            #expect(await f.request(id).outcome?.cold == true)
            await f.supervisor.endIdleInstances(of: id)
            #expect(await f.supervisor.liveInstances(of: id) == 0)
            #expect(await f.supervisor.terminationRecords().map(\.reason) == [.idleExit])
            let next = await f.request(id)
            #expect(next.outcome?.cold == true && next.phase("view") == nil, "a new process in the sandbox it had")
        }
    }

    @Test func idleInstanceExits() async throws {
        try await withProbe(policy: ["idleTimeout: 300ms"]) { f, id in
            #expect(await f.request(id).outcome?.outcome == .completed)
            var waited = 0
            while await f.supervisor.liveInstances(of: id) > 0 && waited < 100 {
                try await Task.sleep(for: .milliseconds(50))
                waited += 1
            }
            #expect(await f.supervisor.liveInstances(of: id) == 0)
            #expect(await f.supervisor.terminationRecords().map(\.reason) == [.idleExit])
        }
    }

    @Test func overTheMemoryLimitIsPerProcessLimit() async throws {
        let memory = [
            "memory:", "  activeHardLimit: 16MiB", "  activeSoftLimit: 12MiB", "  inactiveHardLimit: 16MiB",
            "  inactiveSoftLimit: 8MiB", "  pageCacheAllowance: 4MiB",
        ]
        try await withProbe(policy: memory) { f, id in
            let r = await f.request(id, userInfo: Self.action("allocate", "64"))
            let o = try #require(r.outcome)
            #expect(o.outcome == .failed && o.reason == .perProcessLimit, "\(o)")
        }
    }

    @Test func seccompKillActionIsSeccompViolation() async throws {
        let policy = ["syscalls:", "  deny:", "    - group: reboot", "      action: kill"]
        try await withProbe(policy: policy) { f, id in
            let r = await f.request(id, userInfo: Self.action("syscall", "reboot"))
            let o = try #require(r.outcome)
            #expect(o.outcome == .failed && o.reason == .seccompViolation, "\(o)")
        }
    }

    @Test func refusedBeforeLaunch() async throws {
        let textOnly = "<dict><key>NSExtensionActivationSupportsText</key><true/></dict>"
        try await withProbe(rule: textOnly) { f, id in
            #expect(await f.request("dev.appex.tests.nobody").refusal?.reason == .unknownExtension)
            #expect(await f.request(id, text: nil).refusal?.reason == .notActivated)
            _ = try await f.supervisor.disable(id)
            #expect(await f.request(id).refusal?.reason == .disabled)
            #expect(await f.supervisor.liveInstances(of: id) == 0)
        }
    }

    @Test func attachmentDescriptorIsReadableInsideTheSandbox() async throws {
        try await withProbe { f, id in
            let secret = f.root + "/host-only.txt"
            try SupervisorFixture.write("contents by descriptor", to: secret)
            let fd = open(secret, O_RDONLY | O_CLOEXEC)
            try #require(fd >= 0)
            let item = AppexWire.ExtensionItem(
                attachments: [AppexWire.Attachment(typeIdentifiers: ["public.plain-text"], content: .descriptor(index: 0))],
                userInfo: Self.action("fds"))
            let r = await f.request(id, items: [item], descriptors: [fd])
            #expect(r.outcome?.items.first?.attributedContentText == "contents by descriptor", "\(r)")
            // The host path itself does not exist in the extension's view.
            let probe = await f.request(id, userInfo: Self.action("stat", secret))
            #expect(probe.outcome?.items.first?.attributedContentText == "errno=2", "\(probe)")
        }
    }

    /// An extension that sends a malformed, truncated, oversized or out-of-order frame loses
    /// its connection and its life (`protocol-error`, with what was wrong); another extension
    /// serving a request meanwhile finishes it, and the next request to the offender launches
    /// afresh.
    @Test(arguments: [
        "bad-magic": "bad-magic", "truncated": "truncated", "oversized": "frame-too-large",
        "out-of-order": "out-of-order",
    ])
    func badFrameFromAnExtensionEndsOnlyThatExtension(kind: String, said: String) async throws {
        try await withProbe { f, id in
            let bystander = try await f.install(executable: Self.probe, identifier: "dev.appex.tests.bystander")
            async let served = f.request(bystander, userInfo: Self.action("sleep", "400"))
            let r = await f.request(id, userInfo: Self.action("send-frame", kind))
            let o = try #require(r.outcome, "\(r)")
            #expect(o.outcome == .failed && o.reason == .protocolError, "\(o)")
            let other = await served
            #expect(
                other.outcome?.outcome == .completed && other.outcome?.items.first?.attributedContentText == "slept 400 ms",
                "\(other)")
            let records = await f.supervisor.terminationRecords()
            let record = try #require(records.first { $0.bundleIdentifier == id })
            #expect(record.reason == .protocolError)
            #expect(record.message.contains(said), "\(record.message)")
            #expect(!records.contains { $0.bundleIdentifier == bystander })
            let next = await f.request(id, text: "still here")
            #expect(next.outcome?.outcome == .completed && next.outcome?.cold == true)
        }
    }

    @Test func concurrentRequestsQueueAtMaxInstances() async throws {
        try await withProbe(policy: ["maxInstances: 1"]) { f, id in
            async let a = f.request(id, userInfo: Self.action("sleep", "300"), id: 1)
            async let b = f.request(id, userInfo: Self.action("sleep", "300"), id: 2)
            let (ra, rb) = await (a, b)
            #expect(ra.outcome?.outcome == .completed && rb.outcome?.outcome == .completed)
            #expect([ra, rb].filter { $0.phase("queue") != nil }.count == 1, "one waited for the other")
            #expect(await f.supervisor.liveInstances(of: id) == 1)
        }
        try await withProbe(policy: ["maxInstances: 2"]) { f, id in
            async let a = f.request(id, userInfo: Self.action("sleep", "300"), id: 1)
            async let b = f.request(id, userInfo: Self.action("sleep", "300"), id: 2)
            let (ra, rb) = await (a, b)
            #expect(ra.outcome?.cold == true && rb.outcome?.cold == true, "two instances served them")
            #expect(await f.supervisor.liveInstances(of: id) == 2)
        }
    }
}

/// A value shared with a @Sendable closure.
final class Locked<T>: @unchecked Sendable {
    private var stored: T
    private let lock = NSLock()
    init(_ value: T) { stored = value }
    var value: T { lock.withLock { stored } }
    func mutate(_ body: (inout T) -> Void) { lock.withLock { body(&stored) } }
}
