import AppexHostClient
import AppexWire
import BenchSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The Appex side: a real appexd with a memory budget and nothing but the budget judging
/// pressure (`--no-system-pressure`: the host's MemAvailable and PSI, which other work on the
/// machine moves, stay out of it). The victim is the probe extension, launched afresh for each
/// trial, growing by its `grow` action: the parent cgroup then holds the probe alone.
@MainActor final class AppexSide {
    static let point = "dev.appex.bench.jetsam"
    static let identifier = "dev.appex.bench.jetsam.bloater"

    let process: Process
    let socket: String
    let logPath: String
    let budget: Int64
    let client: HostClient
    private let interruptions: AsyncStream<Interruption>.Iterator

    /// The line Critical is entered at: 90 % of the budget, as PressureLadder has it.
    var criticalLine: Int64 { Int64((Double(budget) * 0.90).rounded(.up)) }

    init(appexd: String, probe: String, root: String, budgetMiB: Int) async {
        budget = Int64(budgetMiB) << 20
        socket = root + "/appexd.sock"
        logPath = root + "/appexd.log"
        let policies = root + "/policies/extension-points"
        do {
            try FileManager.default.createDirectory(atPath: policies, withIntermediateDirectories: true)
            try Self.policy(point: Self.point, idleBand: "foreground")
                .write(toFile: policies + "/jetsam-bench.yaml", atomically: true, encoding: .utf8)
        } catch { fail("policy: \(error)") }
        process = startAppexd(
            appexd,
            arguments: [
                "--state-dir", root + "/state", "--policies", root + "/policies",
                "--cgroup-parent", "appex-jetsam-bench-\(getpid())", "--uid-range", "350000-350999",
                "--metrics", "off", "--memory-budget", "\(budgetMiB)MiB", "--no-system-pressure",
                // notice: the governor's level changes and what caused each.
                "--log-level", "notice",
            ], logPath: logPath, socket: socket)
        do {
            client = try HostClient.connect(socketPath: socket, identifier: "dev.appex.bench.jetsam-host")
            interruptions = client.interruptions.makeAsyncIterator()
            _ = try await client.install(path: Self.bundle(probe: probe, root: root))
            _ = try await client.enable(Self.identifier)
        } catch { fail("appexd: \(error)") }
    }

    /// An extension point whose own limits are far above the budget, with no pings while its
    /// probe grows with its only thread busy: the budget is the only thing that can end it.
    static func policy(point: String, idleBand: String) -> String {
        """
        extensionPoints: [\(point)]
        title: Jetsam benchmark, \(point)
        memory:
          activeHardLimit: 1GiB
          activeSoftLimit: 1GiB
          inactiveHardLimit: 1GiB
          inactiveSoftLimit: 1GiB
          pageCacheAllowance: 32MiB
        jetsamBand: foreground
        idleBand: \(idleBand)
        launchDeadline: 10s
        requestTimeout: 1m
        idleTimeout: 1h
        pingInterval: 1h
        unresponsiveTimeout: 1h

        """
    }

    static func bundle(
        probe: String, root: String, name: String = "Bloater", identifier: String = identifier,
        point: String = point
    ) -> String {
        let path = root + "/src/\(name).appex"
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: probe, toPath: path + "/probe")
            try """
            <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>
            <key>CFBundleIdentifier</key><string>\(identifier)</string><key>CFBundleExecutable</key><string>probe</string>
            <key>CFBundlePackageType</key><string>XPC!</string><key>CFBundleVersion</key><string>1</string>
            <key>NSExtension</key><dict><key>NSExtensionPointIdentifier</key><string>\(point)</string></dict>
            </dict></plist>
            """.write(toFile: path + "/Info.plist", atomically: true, encoding: .utf8)
        } catch { fail("bundle: \(error)") }
        for dir in [root, root + "/src", path] { chmod(dir, 0o755) }
        return path
    }

    /// Waits (bounded, 5 s) until the previous victim is gone and the level is back to normal.
    /// Returns when that was seen (monotonic ns), or nil when the level stayed at Warning with
    /// no extension left (the next trial can start from there: only Critical kills).
    @discardableResult
    func waitUntilQuiet() async throws -> UInt64? {
        var report = try await client.jetsam()
        for _ in 0..<200 {
            if report.level == "normal" && report.entries.isEmpty { return now() }
            try await Task.sleep(for: .milliseconds(25))
            report = try await client.jetsam()
        }
        guard report.entries.isEmpty, report.level != "critical" else {
            fail("appexd did not come back from critical pressure with no extension running: \(report)")
        }
        return nil
    }

    struct Trial {
        var result: TrialResult
        /// From the death to appexd's level reading normal again, polled every 25 ms (nil: it
        /// stayed at Warning for 5 s with nothing running).
        var backToNormal: UInt64?
        /// Growth at which the parent's footprint reaches the critical line.
        var crossBytes: Int64
        /// appexd's own record: its kill decision → the death its pidfd reported, µs.
        var decisionToDeathMicros: UInt64?
        var meanTouch: UInt64
    }

    /// One trial: a fresh instance, its pid watched, then it grows until appexd kills it.
    func trial(plan: (Int64) -> GrowPlan, timeoutMilliseconds: Int32) async throws -> Trial {
        try await waitUntilQuiet()
        let launched = try await client.beginRequest(bundleIdentifier: Self.identifier, items: [ExtensionItem(attributedContentText: "launch")])
        guard launched.outcome == .completed, launched.cold else { fail("launch: \(launched.message)") }
        let report = try await client.jetsam()
        guard report.entries.count == 1, let pid = report.entries.first?.pid, pid > 0 else { fail("jetsam list: \(report)") }
        // What the parent holds besides the growth to come: the probe at rest.
        let crossBytes = criticalLine - Int64(report.footprintBytes)
        let grow = plan(crossBytes)
        let log = GrowPipe()
        guard let watch = DeathWatch(pid: pid, timeoutMilliseconds: timeoutMilliseconds + 100) else {
            fail("the probe \(pid) is gone before it grew")
        }
        sleepMicros(randomDelayMicros())
        var item = ExtensionItem(userInfo: ["probe.action": .string("grow"), "probe.arg": .string(grow.argument)])
        item.attachments = [Attachment(typeIdentifiers: ["public.data"], content: .descriptor(index: 0))]
        let pending = try client.startRequest(bundleIdentifier: Self.identifier, items: [item], descriptors: [log.writeEnd])
        log.sent()
        let death = await watch.death()
        let outcome = try await pending.outcome()
        var decision: UInt64?
        if outcome.outcome == .failed {
            guard outcome.reason == .memoryPressure else { fail("the probe ended with \(outcome.message), not memory-pressure") }
            var stream = interruptions  // one stream underneath: the copy moves it on
            while let i = await stream.next(isolation: #isolation) {
                if i.requestID == pending.requestID {
                    decision = i.triggerToDeathMicros
                    break
                }
            }
        }
        let quiet = death != nil ? try await waitUntilQuiet() : nil
        var backToNormal: UInt64?
        if let quiet, let death { backToNormal = quiet > death ? quiet - death : 0 }
        let steps = log.steps()
        return Trial(
            result: result(steps.crossing(growth: crossBytes), death: death), backToNormal: backToNormal, crossBytes: crossBytes,
            decisionToDeathMicros: decision, meanTouch: steps.meanTouch)
    }

    /// What moved the governor to Critical each time, from its log: the usage threshold's
    /// event, or the re-read while the charge was over the line and the footprint not yet.
    func criticalCauses() -> [String: Int] {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        var causes: [String: Int] = [:]
        for line in text.split(separator: "\n") where line.contains("→ critical:") {
            let cause =
                line.contains("charge above a line, footprint below it")
                ? "re-read while the charge was over the line and the footprint not (GapRecheck)"
                : line.contains("charge crossed")
                    ? "usage threshold event"
                    : line.contains("vmpressure") ? "vmpressure" : "other: \(line.suffix(60))"
            causes[cause, default: 0] += 1
        }
        return causes
    }

    nonisolated func stop() {
        client.close()
        stopAppexd(process)
    }
}
