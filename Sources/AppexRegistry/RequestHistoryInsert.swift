import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

// A request row is written for every request a supervisor serves. GRDB's Codable insert
// builds the row through an encoder and formats its date with a DateFormatter (ICU), which
// costs more than the write itself; this writes the same columns, with the same text, through
// one cached statement.

extension RequestHistory {
    static let insertSQL = """
        INSERT INTO request (bundleIdentifier, time, outcome, reason, cold, totalMicros, peakMemoryBytes) \
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """

    /// Inserts the row as `insert(db)` would, without reading back its id.
    func insertPrepared(_ db: Database) throws {
        let statement = try db.cachedStatement(sql: Self.insertSQL)
        try statement.execute(arguments: [
            bundleIdentifier, StoredDate.text(time), outcome, reason, cold, totalMicros, peakMemoryBytes,
        ])
    }
}

/// A date as GRDB stores it: "yyyy-MM-dd HH:mm:ss.SSS" in UTC, to the nearest millisecond.
enum StoredDate {
    static func text(_ date: Date) -> String {
        // Milliseconds since 1970 as Foundation's formatter computes them (a double, plus a
        // half, floored), so the text is the formatter's to the last digit.
        let milliseconds = ((date.timeIntervalSinceReferenceDate + Date.timeIntervalBetween1970AndReferenceDate) * 1000 + 0.5).rounded(.down)
        let whole = Int64(milliseconds)
        var seconds = time_t(whole >= 0 ? whole / 1000 : (whole - 999) / 1000)
        let millis = Int(whole - Int64(seconds) * 1000)
        var fields = tm()
        gmtime_r(&seconds, &fields)
        var text = ""
        text.reserveCapacity(23)
        append(Int(fields.tm_year) + 1900, width: 4, to: &text)
        text.append("-")
        append(Int(fields.tm_mon) + 1, width: 2, to: &text)
        text.append("-")
        append(Int(fields.tm_mday), width: 2, to: &text)
        text.append(" ")
        append(Int(fields.tm_hour), width: 2, to: &text)
        text.append(":")
        append(Int(fields.tm_min), width: 2, to: &text)
        text.append(":")
        append(Int(fields.tm_sec), width: 2, to: &text)
        text.append(".")
        append(millis, width: 3, to: &text)
        return text
    }

    private static func append(_ value: Int, width: Int, to text: inout String) {
        let digits = String(value)
        if digits.count < width { text.append(String(repeating: "0", count: width - digits.count)) }
        text.append(digits)
    }
}
