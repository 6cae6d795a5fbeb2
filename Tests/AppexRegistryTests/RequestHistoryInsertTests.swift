import Foundation
import GRDB
import Testing

@testable import AppexRegistry

/// Request rows skip GRDB's Codable insert: they must land exactly as it would write them.
@Suite struct RequestHistoryInsertTests {
    @Test func datesAreStoredAsGRDBStoresThem() throws {
        var generator = SystemRandomNumberGenerator()
        var dates = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 0.9999),
            Date(timeIntervalSince1970: 1_795_000_000.123456), Date(timeIntervalSince1970: 1_795_000_000.9995),
            Date(timeIntervalSince1970: 951_782_400.5),  // 2000-02-29
            Date(timeIntervalSince1970: 4_102_444_799.999),  // 2099-12-31 23:59:59.999
            Date(),
        ]
        for _ in 0..<2000 {
            dates.append(Date(timeIntervalSince1970: Double.random(in: 0..<4_102_444_800, using: &generator)))
        }
        for date in dates {
            guard case .string(let expected) = date.databaseValue.storage else {
                Issue.record("GRDB stored \(date) as something other than text")
                continue
            }
            #expect(StoredDate.text(date) == expected, "\(date.timeIntervalSince1970)")
        }
    }

    @Test func aRowReadsBackAsWritten() throws {
        let scratch = try Scratch()
        let registry = try Registry(stateDirectory: scratch.state)
        let time = Date(timeIntervalSince1970: 1_795_000_000.25)
        let rows = [
            RequestHistory(
                bundleIdentifier: "a", time: time, outcome: "completed", reason: nil,
                cold: true, totalMicros: 2600, peakMemoryBytes: 1 << 20),
            RequestHistory(
                bundleIdentifier: "b", time: time, outcome: "failed", reason: "launch-timeout",
                cold: false, totalMicros: 1_000_000, peakMemoryBytes: nil),
        ]
        try registry.record(rows.map { .request($0) })
        let back = try registry.requests().reversed().map { row -> RequestHistory in
            var row = row
            row.id = nil
            return row
        }
        #expect(back == rows)
    }
}
