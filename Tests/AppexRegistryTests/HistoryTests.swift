import AppexRegistry
import Foundation
import Testing

/// The supervisor's history tables: rows come back newest first, per extension, across a
/// reopen, and each table keeps only its newest `limit` rows.
@Suite struct HistoryTests {
    @Test func rowsSurviveAReopenNewestFirst() throws {
        let scratch = try Scratch()
        do {
            let registry = try Registry(stateDirectory: scratch.state)
            try registry.record(
                LaunchHistory(
                    bundleIdentifier: "a", version: "1", time: Date(),
                    phases: [("spawn", 900), ("checkIn", 2400)]))
            try registry.record(
                RequestHistory(
                    bundleIdentifier: "a", time: Date(), outcome: "completed", reason: nil,
                    cold: true, totalMicros: 2600, peakMemoryBytes: 1 << 20))
            try registry.record(
                RequestHistory(
                    bundleIdentifier: "b", time: Date(), outcome: "failed", reason: "launch-timeout",
                    cold: true, totalMicros: 1_000_000, peakMemoryBytes: nil))
            try registry.record(
                TerminationHistory(
                    bundleIdentifier: "a", time: Date(), reason: "idle-exit", message: "idle",
                    signal: nil, exitStatus: 0, peakMemoryBytes: 1 << 20, requestsServed: 1))
        }
        let reopened = try Registry(stateDirectory: scratch.state)
        let launch = try #require(try reopened.launches(of: "a").first)
        #expect(launch.version == "1" && launch.phaseMicroseconds == ["spawn": 900, "checkIn": 2400])
        #expect(try reopened.requests().map(\.bundleIdentifier) == ["b", "a"])
        #expect(try reopened.requests(of: "b").first?.reason == "launch-timeout")
        #expect(try reopened.terminations(of: "a").map(\.reason) == ["idle-exit"])
        #expect(try reopened.terminations(of: "b").isEmpty)
    }

    @Test func eachTableKeepsItsNewestRows() throws {
        let scratch = try Scratch()
        let registry = try Registry(stateDirectory: scratch.state)
        for i in 0..<25 {
            try registry.record(
                TerminationHistory(
                    bundleIdentifier: "x", time: Date(), reason: "crashed", message: "#\(i)",
                    signal: 11, exitStatus: nil, peakMemoryBytes: nil, requestsServed: i),
                limit: 10)
        }
        let kept = try registry.terminations(limit: 100)
        #expect(kept.count == 10)
        #expect(kept.map(\.message) == (15..<25).reversed().map { "#\($0)" })
    }
}
