import AppexCgroups
import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The footprint limit attacked the way an extension would, through the real
/// `appex request --bundle` (an embedded supervisor) and `appex kills`: memory past the fatal
/// limit in anonymous pages, and in shared memory (a memfd) that a limit on anonymous memory
/// alone would miss. The page-cache allowance is large, so only Appex's own footprint check
/// can stop either at the limit: the kernel's backstop is far above what the probe takes.
@Suite(.serialized, .requiresRoot("the embedded supervisor needs root"))
struct JetsamAttackCLITests {
    static let point = "dev.appex.tests.jetsam-cli"
    static let probe = BuiltProducts.path("appex-probe-extension")

    /// A scratch directory with the probe bundle (`Probe.appex`), a policy overlay giving the
    /// point a 16 MiB fatal active limit over a 96 MiB page-cache allowance, and a state
    /// directory; removed with the cgroup parent afterwards.
    struct Scratch {
        let root: String
        var bundle: String { root + "/src/Probe.appex" }
        var policies: String { root + "/policies" }
        var state: String { root + "/state" }

        init() throws {
            root = try ScratchDirectory.make("cli-jetsam", mode: 0o755)
            let fm = FileManager.default
            try BareBundle.write(
                at: bundle, executable: "probe", from: JetsamAttackCLITests.probe,
                identifier: "dev.appex.tests.jetsam-cli.probe", point: JetsamAttackCLITests.point)
            try fm.createDirectory(atPath: policies + "/extension-points", withIntermediateDirectories: true)
            try """
            extensionPoints: [\(JetsamAttackCLITests.point)]
            title: Jetsam attack tests
            memory:
              activeSoftLimit: 12MiB
              activeHardLimit: 16MiB
              inactiveSoftLimit: 12MiB
              inactiveHardLimit: 16MiB
              pageCacheAllowance: 96MiB
            """.write(toFile: policies + "/extension-points/jetsam-cli.yaml", atomically: true, encoding: .utf8)
        }

        func request(_ action: String, _ arg: String, json: Bool = true) throws -> AppexBinary.Result {
            // Uids of its own: the embedded supervisor's sweep of its state's uids must never hit
            // an extension that another test's supervisor runs under the same numbers.
            try AppexBinary.run(
                ["request", "--bundle", bundle, "--policy-dir", policies, "--state-dir", state]
                    + (json ? ["--json"] : []) + [
                        "--uid-range", "328000-328999",
                        "--user-info", "probe.action=\(action)", "--user-info", "probe.arg=\(arg)",
                    ])
        }

        func remove() {
            try? ScratchDirectory.removeTree(root)
            try? CgroupManager.detect(parentName: "appex-request").removeParent()
        }
    }

    @Test(arguments: ["allocate", "allocate-shared"])
    func pastTheFatalLimitIsKilledAtIt(_ action: String) throws {
        let s = try Scratch()
        defer { s.remove() }
        // Within the limit: served.
        let small = try s.request(action, "4")
        #expect(small.status == 0, "\(small.stderr)")
        #expect((try small.json() as? [String: Any])?["outcome"] as? String == "completed", "\(small.stdout)")

        // 48 MiB against 16: appexd kills at its footprint line, with the reason; the cgroup's
        // own limit (16 + 96 MiB) is never reached, so the kernel did not do it.
        let big = try s.request(action, "48")
        let json = try #require(try big.json() as? [String: Any], "\(big.stdout) \(big.stderr)")
        #expect(json["outcome"] as? String == "failed" && json["reason"] as? String == "per-process-limit", "\(json)")
        #expect(big.status == 1)
        // For people: the reason and appexd's message, without its error domain and code.
        let human = try s.request(action, "48", json: false)
        #expect(human.status == 1 && human.stdout.hasPrefix("failed (") && human.stdout.contains("per-process-limit"), "\(human.stdout)")
        #expect(!human.stdout.contains("dev.appex.appexd"), "\(human.stdout)")

        let kills = try AppexBinary.run(["kills", "--json", "--state-dir", s.state])
        #expect(kills.status == 0, "\(kills.stderr)")
        let records = try #require(try kills.json() as? [[String: Any]], "\(kills.stdout)")
        let record = try #require(records.first, "newest first: \(kills.stdout)")
        #expect(record["reason"] as? String == "per-process-limit", "\(record)")
        #expect(record["bundleIdentifier"] as? String == "dev.appex.tests.jetsam-cli.probe")
        // appexd's own kill at its line (the kernel's would say nothing of a limit of 16 MiB,
        // and its limit, 112 MiB, was never reached). On a fresh instance the probe may take
        // all 48 MiB before the thresholds are armed (each waits an RCU grace period); then the
        // check before its answer is what stops it: the request never completes either way.
        #expect((record["message"] as? String)?.contains("limit of 16 MiB") == true, "\(record)")
        let footprint = try #require(record["footprintBytes"] as? Int, "\(record)")
        #expect(footprint >= 16 << 20 && footprint < 64 << 20, "footprint at the kill: \(footprint)")
        #expect(record["triggerToDeathMicros"] is Int)
    }

    @Test func badUserInfoIsRefusedWithTheOption() throws {
        let r = try AppexBinary.run(["request", "x", "--user-info", "no-equals-sign"])
        #expect(r.status == 64 && r.stderr.contains("--user-info \"no-equals-sign\": expected KEY=VALUE"), "\(r.stderr)")
        let twice = try AppexBinary.run(["request", "x", "--user-info", "a=1", "--user-info", "a=2"])
        #expect(twice.status == 64 && twice.stderr.contains("a is given twice"), "\(twice.stderr)")
    }
}
