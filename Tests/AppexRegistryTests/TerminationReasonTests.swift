import AppexKillReason
import Foundation
import GRDB
import Testing

@testable import AppexRegistry

/// A termination's reason is stored as its string and read back typed; a string this build does
/// not know (written by another version of appexd) reads back as it is, not as an error.
@Suite struct TerminationReasonTests {
    @Test func knownReasonsComeBackTyped() throws {
        let scratch = try Scratch()
        let registry = try Registry(stateDirectory: scratch.state)
        for reason in [KillReason.kernelOOM, .perProcessLimit, .launchTimeout, .idleExit] {
            try registry.record(
                TerminationHistory(
                    bundleIdentifier: "x", time: Date(), reason: reason, message: "",
                    signal: nil, exitStatus: nil, peakMemoryBytes: nil, requestsServed: 0))
        }
        let stored = try registry.database.read { db in try String.fetchAll(db, sql: "SELECT reason FROM termination ORDER BY id") }
        #expect(stored == ["kernel-oom", "per-process-limit", "launch-timeout", "idle-exit"])
        #expect(try registry.terminations().map(\.reason) == [.idleExit, .launchTimeout, .perProcessLimit, .kernelOOM])
    }

    @Test func anUnknownReasonReadsBackAsItIs() throws {
        let scratch = try Scratch()
        let registry = try Registry(stateDirectory: scratch.state)
        try registry.database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO termination (bundleIdentifier, time, reason, message, requestsServed)
                    VALUES ('old', '2026-11-28 09:22:05.841', 'watchdog-expired', 'from another appexd', 0)
                    """)
        }
        let row = try #require(try registry.terminations().first)
        #expect(row.reason == .unrecognized("watchdog-expired"))
        #expect(row.reason.rawValue == "watchdog-expired" && !row.reason.isGraceful && row.reason.isCountedAsKill)
    }
}
