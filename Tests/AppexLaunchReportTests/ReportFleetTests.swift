import AppexKillReason
import AppexRegistry
import Foundation
import Testing

@testable import AppexLaunchReport

/// The fleet overview of `appex report`: the worst few extensions by deadline margin, kills,
/// failed and refused requests, worst first, ties by identifier.
@Suite struct ReportFleetTests {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func history(
        _ id: String, deadline: UInt64? = 1_000_000, checkIns: [UInt64] = [],
        requests: [(outcome: String, reason: String?)] = [], ends: [String] = []
    ) -> ExtensionHistory {
        ExtensionHistory(
            bundleIdentifier: id, deadlineMicros: deadline,
            launches: checkIns.enumerated().map { i, us in
                LaunchHistory(bundleIdentifier: id, version: "1", time: start + Double(i), phases: [("spawn", us / 2), ("checkIn", us)])
            },
            requests: requests.enumerated().map { i, r in
                RequestHistory(
                    bundleIdentifier: id, time: start + Double(i), outcome: r.outcome, reason: r.reason, cold: true,
                    totalMicros: 100, peakMemoryBytes: nil)
            },
            terminations: ends.enumerated().map { i, reason in
                TerminationHistory(
                    bundleIdentifier: id, time: start + Double(i), reason: KillReason(rawValue: reason), message: "", signal: nil,
                    exitStatus: nil, peakMemoryBytes: nil, requestsServed: 0)
            })
    }

    @Test func nearestTheDeadlineComesFirstAndNeedsADeadline() {
        let fleet = ReportFleet([
            Self.history("com.example.fast", checkIns: [10_000, 20_000]),
            Self.history("com.example.slow", checkIns: [900_000, 100_000]),
            Self.history("com.example.tight", deadline: 200_000, checkIns: [150_000]),
            Self.history("com.example.gone", deadline: nil, checkIns: [999_999]),
            Self.history("com.example.idle"),
        ])
        #expect(fleet.nearestDeadline.map(\.bundleIdentifier) == ["com.example.slow", "com.example.tight", "com.example.fast"])
        let slow = fleet.nearestDeadline[0]
        #expect(slow.p99 == 900_000 && slow.launches == 2 && slow.ratio == 0.9)
        #expect(fleet.nearestDeadline[1].ratio == 0.75)
    }

    @Test func gracefulEndsAreNotKillsAndTheCommonestReasonIsNamed() {
        let fleet = ReportFleet([
            Self.history("com.example.a", ends: ["idle-exit", "crashed", "per-process-limit", "per-process-limit"]),
            Self.history("com.example.b", ends: ["exited", "disabled", "supervisor-shutdown"]),
            Self.history("com.example.c", ends: ["seccomp-violation", "crashed", "launch-timeout"]),
        ])
        #expect(fleet.mostKilled.map(\.bundleIdentifier) == ["com.example.a", "com.example.c"], "b was never killed")
        #expect(fleet.mostKilled[0].count == 3 && fleet.mostKilled[0].of == 4)
        #expect(fleet.mostKilled[0].top == "per-process-limit")
        // A tie in frequency goes to the reason first by name.
        #expect(fleet.mostKilled[1].top == "crashed")
    }

    @Test func failedAndRefusedRequestsAreCountedApart() {
        let fleet = ReportFleet([
            Self.history("com.example.a", requests: [("completed", nil), ("failed", "request-timeout"), ("refused", "disabled")]),
            Self.history("com.example.b", requests: [("failed", nil), ("failed", nil)]),
        ])
        #expect(fleet.mostFailed.map(\.bundleIdentifier) == ["com.example.b", "com.example.a"])
        #expect(fleet.mostFailed[0].top == "failed", "a failure without a reason counts as one")
        #expect(fleet.mostFailed[1].top == "request-timeout" && fleet.mostFailed[1].of == 3)
        #expect(fleet.mostRefused.map(\.bundleIdentifier) == ["com.example.a"])
        #expect(fleet.mostRefused[0].top == "disabled")
    }

    @Test func eachListKeepsTheWorstFive() {
        let fleet = ReportFleet(
            (0..<8).map { i in
                Self.history("com.example.x\(i)", ends: Array(repeating: "crashed", count: i + 1))
            })
        #expect(fleet.mostKilled.count == ReportFleet.rows)
        #expect(fleet.mostKilled.map(\.count) == [8, 7, 6, 5, 4])
    }

    @Test func theTextSaysWhenAListIsEmpty() {
        let lines = ReportFleet([Self.history("com.example.a", checkIns: [500_000])]).human
        #expect(lines.first == "Fleet")
        #expect(lines.contains("  no kills"))
        #expect(lines.contains("  no failed requests"))
        #expect(lines.contains { $0.hasPrefix("  com.example.a") && $0.contains("500 ms") && $0.contains("50 %") })
    }
}
