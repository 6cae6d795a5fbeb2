import AppexCgroups
import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The jetsam through the real appexd and appex binaries, with real memory (Docs/jetsam.md):
/// a crossing of the budget's critical line costs the fewest kills the victim order allows,
/// the highest band survives, and appexd's kill lands before the kernel's OOM killer, whose
/// kill (when it comes first) is recorded as `kernel-oom`.
@Suite(.serialized) struct JetsamDaemonTests {
    typealias Daemon = DaemonTests.Daemon
    static let mib: Int64 = 1_048_576

    /// Extension points for the tests' bands: generous own limits, so that only the budget
    /// kills, and a long idle timeout, so that nobody leaves by idle exit.
    static let points: [String: String] = [
        "dev.appex.tests.jetsam.idle": "idle",
        "dev.appex.tests.jetsam.background": "background",
        "dev.appex.tests.jetsam.foreground": "foreground",
    ]

    func withDaemon(_ extra: [String], _ body: (Daemon) async throws -> Void) async throws {
        try RequiresRoot.check("appexd needs root")
        let d = try Daemon(tag: "jetsam-tests")
        defer { d.cleanUp() }
        let policies = d.root + "/policies"
        try FileManager.default.createDirectory(atPath: policies + "/extension-points", withIntermediateDirectories: true)
        // Idle for longer than any run of a test lasts, however loaded the machine: an idle exit
        // would take an extension the arithmetic counts on (seen at 200 s with 120 s here).
        for (n, (point, band)) in Self.points.sorted(by: { $0.key < $1.key }).enumerated() {
            let yaml = """
                extensionPoints: [\(point)]
                title: Jetsam daemon tests \(n)
                memory:
                  activeSoftLimit: 256MiB
                  activeHardLimit: 256MiB
                  inactiveSoftLimit: 256MiB
                  inactiveHardLimit: 256MiB
                  pageCacheAllowance: 16MiB
                jetsamBand: foreground
                idleBand: \(band)
                idleTimeout: 10m
                requestTimeout: 20s

                """
            try Data(yaml.utf8).write(to: URL(fileURLWithPath: policies + "/extension-points/jetsam-\(n).yaml"))
        }
        d.extraArguments = ["--policy-dir", policies, "--no-system-pressure"] + extra
        try d.start()
        try await body(d)
    }

    /// A probe bundle under `point`, installed and enabled through the CLI.
    func install(_ d: Daemon, _ name: String, point: String) throws -> String {
        let id = "dev.appex.tests.jetsam.\(name)"
        let bundle = try d.writeProbeBundle(identifier: id, point: point, name: name)
        let installed = try d.appex(["install", bundle])
        try #require(installed.status == 0, "\(installed.err)")
        try #require(try d.appex(["enable", id]).status == 0)
        return id
    }

    /// One probe request through `appex request`; its JSON outcome ("completed", "failed").
    @discardableResult
    func probe(_ d: Daemon, _ id: String, _ action: String, _ arg: String) throws -> String? {
        let r = try d.appex(["request", id, "--json", "--user-info", "probe.action=\(action)", "--user-info", "probe.arg=\(arg)"])
        let json = try? JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any]
        return json?["outcome"] as? String
    }

    /// The kill records (`appex kills --json`), newest first, once no new one has come for
    /// `quiet` (a held kernel signal used to kill again up to a second after the first).
    /// The kill records once no new one has come for `quiet` (by the clock: a next kill waits
    /// for the last victim's cgroup to go, which a loaded machine makes slow).
    func settledKills(_ d: Daemon, quiet: Duration = .seconds(4)) async throws -> [[String: Any]] {
        var last: [[String: Any]] = []
        var changed = ContinuousClock.now
        for _ in 0..<600 {
            let k = try d.appex(["kills", "--json", "--limit", "200", "--state-dir", d.root + "/state"], socket: false)
            let records = (try? JSONSerialization.jsonObject(with: Data(k.out.utf8)) as? [[String: Any]]) ?? []
            if records.count != last.count { changed = .now }
            last = records
            if ContinuousClock.now - changed >= quiet { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return last
    }

    /// The live extensions in victim order (`appex jetsam --json`).
    func live(_ d: Daemon) throws -> [String] {
        let j = try d.appex(["jetsam", "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(j.out.utf8)) as? [String: Any]
        return (report?["extensions"] as? [[String: Any]])?.compactMap { $0["bundleIdentifier"] as? String } ?? []
    }

    /// How often a charge failed at the parent's own limit (the kernel's, at the budget plus
    /// its headroom): 0 means the kernel never even had to reclaim there, let alone kill. (On
    /// v1 the parent's own `oom_kill` counts nothing: the kernel counts a kill only in the
    /// victim's cgroup.)
    func parentLimitHits(_ d: Daemon) throws -> Int64 {
        try CgroupManager.detect(parentName: d.cgroupParent).parentCgroup().memoryEvents()["max", default: 0]
    }

    func reasons(_ kills: [[String: Any]]) -> [String] { kills.compactMap { $0["reason"] as? String } }

    /// The case: `--memory-budget 48MiB`, four extensions of one point holding 14 MiB
    /// each, one after the other. 56 MiB is over the critical line (43.2 MiB); one victim
    /// brings it to 42 MiB, under it: one kill, three survivors, no kernel kill.
    @Test func equalExtensionsUnderATightBudgetLoseOnlyWhatTheArithmeticSays() async throws {
        try await withDaemon(["--memory-budget", "48MiB"]) { d in
            let ids = try (0..<4).map { try install(d, "equal-\($0)", point: "dev.appex.tests.jetsam.idle") }
            for id in ids { try probe(d, id, "allocate", "14") }
            let kills = try await settledKills(d)
            #expect(reasons(kills) == ["memory-pressure"], "\(kills)")
            #expect(kills.first?["bundleIdentifier"] as? String == ids[0], "the longest in the lowest band: \(kills)")
            let survivors = try live(d)
            #expect(Set(survivors) == Set(ids.dropFirst()), "\(survivors)")
            #expect(try parentLimitHits(d) == 0, "the kernel's limit was never reached")
        }
    }

    /// Mixed bands under a 64 MiB budget (critical at 57.6 MiB): idle and background hold
    /// 20 MiB each, then the foreground extension takes 40 MiB. Victims by band, only as many
    /// as needed (idle, then background: 80 → 60 → 40 MiB), and the foreground survives.
    @Test func theHighestBandSurvives() async throws {
        try await withDaemon(["--memory-budget", "64MiB"]) { d in
            let idle = try install(d, "mixed-idle", point: "dev.appex.tests.jetsam.idle")
            let background = try install(d, "mixed-background", point: "dev.appex.tests.jetsam.background")
            let foreground = try install(d, "mixed-foreground", point: "dev.appex.tests.jetsam.foreground")
            try probe(d, idle, "allocate", "20")
            try probe(d, background, "allocate", "20")
            #expect(try probe(d, foreground, "allocate", "40") == "completed")
            let kills = try await settledKills(d)
            #expect(kills.compactMap { $0["bundleIdentifier"] as? String } == [background, idle], "newest first: \(kills)")
            #expect(reasons(kills) == ["memory-pressure", "memory-pressure"])
            #expect(try live(d) == [foreground])
            #expect(try probe(d, foreground, "allocate", "1") == "completed", "it still holds its 40 MiB and serves")
            #expect(try parentLimitHits(d) == 0)
        }
    }

    /// A fast allocator (1 MiB every 2 ms, 500 MiB/s, to 160 MiB) beside two idle extensions,
    /// under 48 MiB: appexd kills (the idle ones, then the allocator), one at a time, before
    /// the kernel's limit (the budget plus its headroom) is reached. The kernel never acts.
    @Test func aFastAllocatorIsStoppedByAppexdNotTheKernel() async throws {
        try await withDaemon(["--memory-budget", "48MiB"]) { d in
            let idle = try (0..<2).map { try install(d, "fast-idle-\($0)", point: "dev.appex.tests.jetsam.idle") }
            let grower = try install(d, "fast-grower", point: "dev.appex.tests.jetsam.foreground")
            for id in idle { try probe(d, id, "allocate", "8") }
            #expect(try probe(d, grower, "grow", "1024,2000,160,0") == "failed")
            let kills = try await settledKills(d)
            #expect(reasons(kills) == ["memory-pressure", "memory-pressure", "memory-pressure"], "\(kills)")
            #expect(kills.compactMap { $0["bundleIdentifier"] as? String } == [grower, idle[1], idle[0]], "\(kills)")
            #expect(try parentLimitHits(d) == 0, "the kernel's limit was never reached")
        }
    }

    /// When appexd is too slow (here: stopped with SIGSTOP while an allocator grows at
    /// 50 MiB/s, with `--budget-headroom 0`: the kernel's limit at the budget, as before),
    /// the kernel's OOM killer acts at the budget's limit. Its kill is recorded as
    /// `kernel-oom`, never as the extension's own limit (256 MiB, far away), in the history,
    /// `appex kills` and the metrics.
    @Test func aKernelKillAtTheBudgetIsRecordedAsKernelOOM() async throws {
        try await withDaemon(["--memory-budget", "48MiB", "--budget-headroom", "0"]) { d in
            let id = try install(d, "kernel-victim", point: "dev.appex.tests.jetsam.foreground")
            let appexd = try #require(d.process?.processIdentifier)
            let manager = try CgroupManager.detect(parentName: d.cgroupParent)
            let parentDir = try #require(manager.parentCgroup().paths.first)
            // appexd stops once the growth has begun, far under the warning line (38 MiB): at
            // 8 MiB. Watched from a thread of its own: a test task can wait long for one of the
            // few threads all tests share, and the allocator does not wait.
            let stopped = DispatchSemaphore(value: 0)
            Thread {
                for _ in 0..<15_000 {
                    let charged = ((try? manager.list()) ?? []).compactMap { name in
                        (try? String(contentsOfFile: "\(parentDir)/\(name)/memory.usage_in_bytes", encoding: .utf8))
                            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                    }.reduce(0, +)
                    if charged >= 8 << 20 { break }
                    usleep(2000)
                }
                kill(appexd, SIGSTOP)
                stopped.signal()
            }.start()
            let request = Task.detached {
                try d.appex([
                    "request", id, "--json", "--user-info", "probe.action=grow",
                    "--user-info", "probe.arg=1024,20000,96,0",
                ])
            }
            stopped.wait()
            var oomKills = 0
            for _ in 0..<200 where oomKills == 0 {
                try await Task.sleep(for: .milliseconds(50))
                // Each extension's own count (v1 counts a kill only in the victim's cgroup).
                oomKills = ((try? manager.list()) ?? []).compactMap { name in
                    (try? String(contentsOfFile: "\(parentDir)/\(name)/memory.oom_control", encoding: .utf8))?
                        .split(separator: "\n").first { $0.hasPrefix("oom_kill ") }.flatMap { Int($0.dropFirst(9)) }
                }.reduce(0, +)
            }
            kill(appexd, SIGCONT)
            #expect(oomKills >= 1, "the kernel killed the allocator at the budget's limit")
            _ = try await request.value
            let kills = try await settledKills(d, quiet: .milliseconds(500))
            #expect(reasons(kills) == ["kernel-oom"], "\(kills)")
            let record = try #require(kills.first)
            #expect((record["message"] as? String)?.contains("memory budget's limit") == true, "\(record)")
            #expect(try parentLimitHits(d) >= 1)
            let address = try #require(try? String(contentsOfFile: d.root + "/state/metrics-address", encoding: .utf8))
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = ["-s", "http://\(address.trimmingCharacters(in: .whitespacesAndNewlines))/metrics"]
            let out = Pipe()
            curl.standardOutput = out
            try curl.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            curl.waitUntilExit()
            // Counted, not only exported at zero.
            let killLines = text.split(separator: "\n").filter { $0.hasPrefix("appex_kills_total{") }
            #expect(
                killLines.contains { $0.contains("reason=\"kernel-oom\"") && (Double($0.split(separator: " ").last ?? "") ?? 0) > 0 },
                "\(killLines)")
        }
    }
}
