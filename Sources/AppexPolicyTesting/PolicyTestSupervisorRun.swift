import AppexPolicy
import AppexSupervisor
import AppexWire
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs the cases that need a request or a check-in (launch-timeout, warned, request, probeConf)
/// through a supervisor embedded here, with the probe extension (Docs/probe-extension.md)
/// installed as a bundle of the case's extension point. Each case gets its own supervisor,
/// state directory, cgroup parent and uids, with the case's policy file and limits as policy
/// overlays: what appexd would do with that policy, end to end.
struct PolicyTestSupervisorRunner: Sendable {
    let environment: PolicyTestEnvironment
    let catalog: PolicyTestCatalog

    func run(_ planned: PlannedPolicyTest) -> PolicyTestVerdict {
        do {
            return try Self.blocking { try await self.runAsync(planned) }
        } catch {
            return .fail("could not run", "\(error)")
        }
    }

    private func runAsync(_ planned: PlannedPolicyTest) async throws -> PolicyTestVerdict {
        let c = planned.testCase
        let slot = try environment.supervisorSlot()
        let work = catalog.scratch + "/" + (slot.state as NSString).lastPathComponent
        var overlays = catalog.overlays
        if let file = c.policyFile { overlays.append(try catalog.load(policyFile: file).overlay) }
        if !c.limits.isEmpty {
            let dir = work + "/limits"
            try FileManager.default.createDirectory(atPath: dir + "/extension-points", withIntermediateDirectories: true)
            try Self.limitsOverlay(planned).write(toFile: dir + "/extension-points/limits.yaml", atomically: true, encoding: .utf8)
            overlays.append(dir)
        }
        let identifier = "dev.appex.test-policy.probe-extension"
        let bundle = try makeBundle(
            in: work + "/src", identifier: identifier, extensionPoint: planned.extensionPoint,
            conf: c.probeConf)

        var logger = Logger(label: "appex.test-policy")
        logger.logLevel = ProcessInfo.processInfo.environment["APPEX_TEST_POLICY_LOG"] == "debug" ? .debug : .critical
        let supervisor = try Supervisor(
            options: SupervisorOptions(
                stateDirectory: slot.state, policyOverlays: overlays, cgroupParent: slot.cgroupParent,
                uidRange: slot.uids, terminateGrace: .milliseconds(500),
                // A verdict must not depend on the host's memory: only the policy's limits count.
                watchSystemPressure: false), logger: logger)
        supervisor.start()
        do {
            _ = try await supervisor.install(path: bundle)
            _ = try await supervisor.enable(identifier)
            let verdict = await exercise(supervisor, identifier: identifier, planned)
            await supervisor.shutdown()
            return verdict
        } catch {
            await supervisor.shutdown()
            throw error
        }
    }

    /// The request, and for `warned` a second one that asks the probe what arrived.
    private func exercise(_ supervisor: Supervisor, identifier: String, _ planned: PlannedPolicyTest) async -> PolicyTestVerdict {
        let words = planned.request ?? ["echo"]
        let started = ContinuousClock.now
        let result = await supervisor.request(Self.request(identifier, id: 1, action: words[0], arg: words.count > 1 ? words[1] : nil))
        let elapsed = ContinuousClock.now - started
        let seen = Self.describe(result, elapsed: elapsed)
        var outcome: RequestOutcome?
        if case .ended(let o, _, let fds) = result {
            fds.forEach { _ = close($0) }
            outcome = o
        }

        switch planned.testCase.expectation {
        case .allowed(let output):
            guard let outcome, outcome.outcome == .completed else { return .fail(seen, "the request did not complete") }
            let text = outcome.items.first?.attributedContentText ?? ""
            if let output, !text.hasPrefix(output) { return .fail(seen, "the answer does not start with \"\(output)\"") }
            return .pass(seen)
        case .killed(let reason, let within):
            guard let outcome, outcome.outcome == .failed, let got = outcome.reason else {
                return .fail(seen, "not killed: the request ended otherwise")
            }
            guard got.killReason == reason else { return .fail(seen, "ended for \(got), not \(reason)") }
            if let within, elapsed > within { return .fail(seen, "later than \(PolicyTestExpectation.format(within))") }
            return .pass(seen)
        case .launchTimeout(let within):
            guard let outcome, outcome.outcome == .failed, outcome.reason == .launchTimeout else {
                return .fail(seen, "not killed at the launch deadline")
            }
            if let within, elapsed > within { return .fail(seen, "later than \(PolicyTestExpectation.format(within))") }
            return .pass(seen)
        case .warned:
            guard let outcome, outcome.outcome == .completed else {
                return .fail(seen, "the request did not complete, so no warning could be counted")
            }
            let asked = await supervisor.request(Self.request(identifier, id: 2, action: "memory-warnings", arg: nil))
            guard case .ended(let counts, _, _) = asked, let text = counts.items.first?.attributedContentText,
                let n = text.split(separator: " ").first(where: { $0.hasPrefix("memory-warnings=") }).flatMap({ Int($0.dropFirst(16)) })
            else { return .fail(seen, "the probe did not say which warnings arrived: \(Self.describe(asked, elapsed: nil))") }
            if n >= 1 { return .pass("\(seen); \(text)") }
            return .fail("\(seen); \(text)", "no memory warning arrived (appexd warns at 80 % of the active limit)")
        case .denied, .invisible, .readOnly:
            return .fail(seen, "needs appex-probe")  // the parser keeps these out
        }
    }

    static func request(_ identifier: String, id: UInt64, action: String, arg: String?) -> HostBeginRequest {
        var info: [String: UserInfoValue] = ["probe.action": .string(action)]
        if let arg { info["probe.arg"] = .string(arg) }
        return HostBeginRequest(
            requestID: id, bundleIdentifier: identifier,
            items: [ExtensionItem(attributedContentText: "appex test-policy", userInfo: info)])
    }

    static func describe(_ result: EmbeddedResult, elapsed: Duration?) -> String {
        let after = elapsed.map { " after \($0.milliseconds) ms" } ?? ""
        switch result {
        case .refused(let r): return "refused: \(r.reason)" + (r.message.map { " (\($0))" } ?? "")
        case .ended(let o, _, _):
            switch o.outcome {
            case .completed: return "completed: \"\(o.items.first?.attributedContentText ?? "")\"\(after)"
            case .cancelled: return "cancelled: \(o.error.map { "\($0.domain) \($0.code)" } ?? "")\(after)"
            case .failed: return "failed: \(o.reason?.rawValue ?? "no reason")\(after)"
            }
        }
    }

    /// The case's limits as a policy file for its extension point, over everything beneath.
    static func limitsOverlay(_ planned: PlannedPolicyTest) -> String {
        let p = planned.policy.policy
        var lines = [
            "extensionPoints: [\"\(planned.extensionPoint)\"]",
            "memory:",
            "  activeHardLimit: \(p.memory.activeHardLimit)",
            "  activeSoftLimit: \(p.memory.activeSoftLimit)",
            "  inactiveHardLimit: \(p.memory.inactiveHardLimit)",
            "  inactiveSoftLimit: \(p.memory.inactiveSoftLimit)",
            "pidsLimit: \(p.pidsLimit)",
            "openFilesLimit: \(p.openFilesLimit)",
            "launchDeadline: \(p.launchDeadline.milliseconds)ms",
        ]
        lines.insert("title: \"\(p.title) (appex test-policy limits)\"", at: 1)
        return lines.joined(separator: "\n") + "\n"
    }

    /// A bundle around the probe extension, declaring `extensionPoint`, with `conf` as its probe.conf.
    func makeBundle(in dir: String, identifier: String, extensionPoint: String, conf: [(key: String, value: Int)]) throws -> String {
        let bundle = dir + "/Probe.appex"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: environment.probeExtension, toPath: bundle + "/probe")
        chmod(bundle + "/probe", 0o755)
        if !conf.isEmpty {
            try conf.map { "\($0.key)=\($0.value)\n" }.joined().write(toFile: bundle + "/probe.conf", atomically: true, encoding: .utf8)
        }
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>CFBundleIdentifier</key><string>\(identifier)</string>
            <key>CFBundleExecutable</key><string>probe</string>
            <key>CFBundlePackageType</key><string>XPC!</string>
            <key>CFBundleVersion</key><string>1</string>
            <key>CFBundleShortVersionString</key><string>1.0</string>
            <key>NSExtension</key><dict>
            <key>NSExtensionPointIdentifier</key><string>\(extensionPoint)</string>
            </dict></dict></plist>
            """
        try plist.write(toFile: bundle + "/Info.plist", atomically: true, encoding: .utf8)
        return bundle
    }

    /// Runs `body` on the concurrency pool and waits for it on this (worker) thread.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let r: Result<T, any Error>
            do { r = .success(try await body()) } catch { r = .failure(error) }
            box.withLock { $0 = r }
            done.signal()
        }
        done.wait()
        return try box.withLock { $0! }.get()
    }
}
