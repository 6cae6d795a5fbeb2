import AppexKillReason
import Foundation
import GRDB

// The supervisor's history in the registry database: launches, requests and terminations,
// each table capped at `historyLimit` rows (the oldest go first), so reports work after a
// restart and the file stays bounded. Written by the supervisor off its event loop.

/// One launch: when, which version, and its phases in µs (e.g. prepare, clone, spawn, checkIn).
public struct LaunchHistory: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "launch"
    public var id: Int64?
    public var bundleIdentifier: String
    public var version: String?
    public var time: Date
    /// "name=µs;name=µs" in the order they happened.
    public var phases: String

    public init(bundleIdentifier: String, version: String?, time: Date, phases: [(String, UInt64)]) {
        self.bundleIdentifier = bundleIdentifier
        self.version = version
        self.time = time
        self.phases = phases.map { "\($0.0)=\($0.1)" }.joined(separator: ";")
    }

    /// The phases back as name → µs.
    public var phaseMicroseconds: [String: UInt64] {
        var out: [String: UInt64] = [:]
        for part in phases.split(separator: ";") {
            let kv = part.split(separator: "=", maxSplits: 1)
            if kv.count == 2, let v = UInt64(kv[1]) { out[String(kv[0])] = v }
        }
        return out
    }
}

/// One request's end.
public struct RequestHistory: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "request"
    public var id: Int64?
    public var bundleIdentifier: String
    public var time: Date
    public var outcome: String
    public var reason: String?
    public var cold: Bool
    public var totalMicros: Int64
    public var peakMemoryBytes: Int64?

    public init(
        bundleIdentifier: String, time: Date, outcome: String, reason: String?, cold: Bool,
        totalMicros: Int64, peakMemoryBytes: Int64?
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.time = time
        self.outcome = outcome
        self.reason = reason
        self.cold = cold
        self.totalMicros = totalMicros
        self.peakMemoryBytes = peakMemoryBytes
    }
}

/// How one instance ended.
public struct TerminationHistory: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "termination"
    public var id: Int64?
    public var bundleIdentifier: String
    public var time: Date
    /// Stored as its string; one this build does not know reads back as `unrecognized`.
    public var reason: KillReason
    public var message: String
    public var signal: Int32?
    public var exitStatus: Int32?
    public var peakMemoryBytes: Int64?
    public var requestsServed: Int
    public var band: Int?
    public var footprintBytes: Int64?
    public var triggerToDeathMicros: Int64?
    /// `time` in µs since 1970: the `time` column keeps milliseconds, and two kills within one
    /// are ordered by this.
    public var timeMicros: Int64?

    public init(
        bundleIdentifier: String, time: Date, reason: KillReason, message: String, signal: Int32?,
        exitStatus: Int32?, peakMemoryBytes: Int64?, requestsServed: Int, band: Int? = nil,
        footprintBytes: Int64? = nil, triggerToDeathMicros: Int64? = nil
    ) {
        self.timeMicros = Int64((time.timeIntervalSince1970 * 1_000_000).rounded())
        self.band = band
        self.footprintBytes = footprintBytes
        self.triggerToDeathMicros = triggerToDeathMicros
        self.bundleIdentifier = bundleIdentifier
        self.time = time
        self.reason = reason
        self.message = message
        self.signal = signal
        self.exitStatus = exitStatus
        self.peakMemoryBytes = peakMemoryBytes
        self.requestsServed = requestsServed
    }
}

extension TerminationHistory {
    /// The time to the microsecond when it was recorded so (rows from before the column: to
    /// the millisecond).
    public var preciseTime: Date {
        timeMicros.map { Date(timeIntervalSince1970: Double($0) / 1_000_000) } ?? time
    }
}

/// One history row of any table, for writing several in one transaction.
public enum HistoryRow: Sendable {
    case launch(LaunchHistory)
    case request(RequestHistory)
    case termination(TerminationHistory)
}

extension Registry {
    /// Rows kept per history table.
    public static let historyLimit = 10_000

    /// Writes `rows` in one transaction (one fsync), then trims each table to `limit`.
    public func record(_ rows: [HistoryRow], limit: Int = Registry.historyLimit) throws {
        guard !rows.isEmpty else { return }
        try Self.databaseCall("record history") {
            try database.write { db in
                for row in rows {
                    switch row {
                    case .launch(let r): try r.insert(db)
                    case .request(let r): try r.insertPrepared(db)
                    case .termination(let r): try r.insert(db)
                    }
                }
                for table in [
                    LaunchHistory.databaseTableName, RequestHistory.databaseTableName,
                    TerminationHistory.databaseTableName,
                ] {
                    try db.execute(sql: "DELETE FROM \(table) WHERE id <= (SELECT MAX(id) FROM \(table)) - ?", arguments: [limit])
                }
            }
        }
    }

    public func record(_ launch: LaunchHistory, limit: Int = Registry.historyLimit) throws {
        try record([.launch(launch)], limit: limit)
    }

    public func record(_ request: RequestHistory, limit: Int = Registry.historyLimit) throws {
        try record([.request(request)], limit: limit)
    }

    public func record(_ termination: TerminationHistory, limit: Int = Registry.historyLimit) throws {
        try record([.termination(termination)], limit: limit)
    }

    /// Newest first; `bundleIdentifier` nil: every extension.
    public func launches(of bundleIdentifier: String? = nil, limit: Int = 100) throws -> [LaunchHistory] {
        try newest(LaunchHistory.self, bundleIdentifier, limit)
    }

    public func requests(of bundleIdentifier: String? = nil, limit: Int = 100) throws -> [RequestHistory] {
        try newest(RequestHistory.self, bundleIdentifier, limit)
    }

    /// Newest first by their time to the microsecond, then as written.
    public func terminations(of bundleIdentifier: String? = nil, limit: Int = 100) throws -> [TerminationHistory] {
        try newest(TerminationHistory.self, bundleIdentifier, limit, order: [Column("timeMicros").desc, Column("id").desc])
    }

    private func newest<R: FetchableRecord & TableRecord>(
        _ type: R.Type, _ bundleIdentifier: String?, _ limit: Int,
        order: [any SQLOrderingTerm] = [Column("id").desc]
    ) throws -> [R] {
        try Self.databaseCall("read \(R.databaseTableName)") {
            try database.read { db in
                var query = R.all()
                if let bundleIdentifier { query = query.filter(Column("bundleIdentifier") == bundleIdentifier) }
                return try query.order(order).limit(limit).fetchAll(db)
            }
        }
    }
}
