import Foundation
import GRDB
import Testing

@testable import AppexRegistry

/// Kill records keep their time to the microsecond (the `time` column keeps milliseconds), and
/// come back newest first by it; rows from before the column get theirs from `time`.
@Suite struct TerminationTimeTests {
    static func record(_ message: String, at micros: Int64) -> TerminationHistory {
        TerminationHistory(
            bundleIdentifier: "x", time: Date(timeIntervalSince1970: Double(micros) / 1_000_000),
            reason: "memory-pressure", message: message, signal: 9, exitStatus: nil,
            peakMemoryBytes: nil, requestsServed: 0)
    }

    @Test func killsInOneMillisecondKeepTheirOrder() throws {
        let scratch = try Scratch()
        let registry = try Registry(stateDirectory: scratch.state)
        let base: Int64 = 1_795_857_725_841_000
        // Written out of order, 300 µs apart: one millisecond holds two of them.
        try registry.record([
            .termination(Self.record("second", at: base + 300)),
            .termination(Self.record("third", at: base + 600)),
            .termination(Self.record("first", at: base)),
        ])
        let back = try registry.terminations()
        #expect(back.map(\.message) == ["third", "second", "first"])
        #expect(back.map(\.timeMicros) == [base + 600, base + 300, base])
        #expect(back.last?.preciseTime == Date(timeIntervalSince1970: Double(base) / 1_000_000))
    }

    @Test func rowsFromBeforeTheColumnGetTheirsFromTime() throws {
        let scratch = try Scratch()
        let path = scratch.state + "/" + Registry.databaseName
        try FileManager.default.createDirectory(atPath: scratch.state, withIntermediateDirectories: true)
        do {
            let pool = try DatabasePool(path: path)
            try RegistrySchema.migrator(stateDirectory: scratch.state).migrate(pool, upTo: "v4: app group owners")
            try pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO termination (bundleIdentifier, time, reason, message, requestsServed)
                        VALUES ('old', '2026-11-28 09:22:05.841', 'crashed', 'before v5', 0)
                        """)
            }
        }
        let registry = try Registry(stateDirectory: scratch.state)
        let old = try #require(try registry.terminations().first)
        #expect(old.timeMicros == 1_795_857_725_841_000, "\(String(describing: old.timeMicros))")
    }
}
