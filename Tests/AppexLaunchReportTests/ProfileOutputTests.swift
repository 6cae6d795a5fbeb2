import AppexTestSupport
import Foundation
import Testing

@testable import AppexLaunchReport

/// What `appex profile` prints of its samples, and how it reads and compares a baseline.
@Suite struct ProfileOutputTests {
    static func samples(warm: Bool = false) -> ProfileSamples {
        var s = ProfileSamples(
            bundleIdentifier: "com.example.share", version: "2.0", warm: warm, requested: 4,
            launchDeadline: .seconds(1))
        for (spawn, checkIn) in [(1000, 3000), (2000, 6000), (1500, 4000)] as [(UInt64, UInt64)] {
            s.samples.append(LaunchPhaseCatalog.withDerived(["spawn": spawn, "checkIn": checkIn]))
        }
        s.failures["launch-timeout"] = 1
        s.failureMessages["launch-timeout"] = "no check-in within 1 s"
        return s
    }

    @Test func theTableGroupsPhasesAndSaysWhereCheckInTimeGoes() throws {
        let text = ProfileOutput(run: Self.samples()).human
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "com.example.share (version 2.0): 3 cold launches, launch deadline 1 s")
        let spawn = try #require(lines.firstIndex { $0.hasPrefix("  spawn") })
        let startup = try #require(lines.firstIndex { $0.hasPrefix("  startup") })
        let checkIn = try #require(lines.firstIndex { $0.hasPrefix("  checkIn") })
        #expect(spawn < startup && startup < checkIn)
        #expect(lines.contains("sandbox (appexd and the kernel)") && lines.contains("extension") && lines.contains("launch"))
        #expect(lines[checkIn].contains("p99 0.6 % of the deadline"))
        // Means: spawn 1500, startup (2000 + 4000 + 2500) / 3 = 2833.3.
        #expect(text.contains("Where check-in time goes (mean 4.33 ms): sandbox 1.5 ms (34.6 %), extension start-up 2.83 ms (65.4 %)."))
        #expect(text.contains("Not counted: 1 launch-timeout (no check-in within 1 s)"))
    }

    @Test func warmRunsHaveNoSharesAndNothingMeasuredIsSaid() {
        var warm = Self.samples(warm: true)
        #expect(ProfileOutput(run: warm).shares == nil)
        #expect(ProfileOutput(run: warm).human.hasPrefix("com.example.share (version 2.0): 3 warm requests to one instance"))
        warm.samples = []
        #expect(ProfileOutput(run: warm).human.contains("Nothing was measured."))
    }

    @Test func jsonOutputReadsBackAsABaseline() throws {
        let dir = try ScratchDirectory("profile-baseline")
        let path = dir.path + "/before.json"
        let data = try JSONSerialization.data(withJSONObject: ProfileOutput(run: Self.samples()).json)
        try data.write(to: URL(fileURLWithPath: path))
        let baseline = try ProfileBaseline.load(path)
        #expect(baseline.bundleIdentifier == "com.example.share" && baseline.mode == "cold")
        #expect(baseline.phases["checkIn"]?.p50 == 4000 && baseline.phases["checkIn"]?.count == 3)

        var faster = Self.samples()
        faster.samples = faster.samples.map { $0.mapValues { $0 / 2 } }
        let rows = baseline.rows(faster)
        let checkIn = try #require(rows.first { $0.phase == "checkIn" })
        #expect(checkIn.p50Ratio == 0.5)
        #expect(baseline.caveats(faster).isEmpty)
        #expect(baseline.caveats(Self.samples(warm: true)) == ["the baseline's launches were cold, these are warm"])
        #expect(ProfileOutput(run: faster, baseline: baseline).human.contains("Against the baseline \(path) (version 2.0):"))
    }

    @Test func aBaselineThatIsNotProfileOutputIsRefusedByName() throws {
        let dir = try ScratchDirectory("profile-baseline-bad")
        let path = dir.path + "/bad.json"
        try Data(#"{"bundleIdentifier": "x", "mode": "cold", "phases": {"spawn": {"p50": -1, "p99": 2, "count": 1}}}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        #expect(Self.refusal(path)?.contains("phases.spawn needs p50, p99 and count") == true)
        try Data("[1]".utf8).write(to: URL(fileURLWithPath: path))
        #expect(Self.refusal(path)?.contains("not a JSON object") == true)
        #expect(Self.refusal(dir.path + "/missing.json")?.hasPrefix("--baseline \(dir.path)/missing.json: cannot read it") == true)
    }

    /// The message `ProfileBaseline.load` refuses `path` with; nil when it loads.
    static func refusal(_ path: String) -> String? {
        do {
            _ = try ProfileBaseline.load(path)
            return nil
        } catch {
            return "\(error)"
        }
    }
}
