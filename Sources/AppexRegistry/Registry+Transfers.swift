import Foundation
import GRDB

// Background transfers in the registry (Docs/transfers.md): what a restarted appexd resumes,
// what `appex transfers` lists, and the history of those that ended.

/// One background transfer.
public struct TransferRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "transfer"

    public enum State: String, Codable, Sendable {
        case pending, running, completed, failed, cancelled
        public var isOver: Bool { self == .completed || self == .failed || self == .cancelled }
    }

    public var id: Int64?
    public var bundleIdentifier: String
    public var sessionIdentifier: String
    /// `download` or `upload`.
    public var kind: String
    public var url: String
    public var method: String
    /// "Name: value" lines.
    public var headers: String
    public var appGroup: String
    public var fileName: String
    public var state: State
    public var reason: String?
    public var message: String?
    public var bytes: Int64
    public var httpStatus: Int?
    /// The validator a partial download was made under (resumed with Range only if it holds).
    public var etag: String?
    /// Worker processes started for it (restarts included).
    public var attempts: Int
    public var createdAt: Date
    public var endedAt: Date?
    /// Its session's events reached the extension (or a host).
    public var delivered: Bool

    public init(
        bundleIdentifier: String, sessionIdentifier: String, kind: String, url: String, method: String,
        headers: [String], appGroup: String, fileName: String, createdAt: Date = Date()
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.sessionIdentifier = sessionIdentifier
        self.kind = kind
        self.url = url
        self.method = method
        self.headers = headers.joined(separator: "\n")
        self.appGroup = appGroup
        self.fileName = fileName
        state = .pending
        bytes = 0
        attempts = 0
        self.createdAt = createdAt
        delivered = false
    }

    public var headerLines: [String] { headers.isEmpty ? [] : headers.split(separator: "\n").map(String.init) }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

extension Registry {
    /// Rows of ended transfers kept as history beyond those not yet delivered.
    public static let transferHistoryLimit = 10_000

    /// Stores a new transfer; returns it with its id.
    public func addTransfer(_ transfer: TransferRecord) throws -> TransferRecord {
        try write("add transfer") { db in
            var row = transfer
            try row.insert(db)
            return row
        }
    }

    /// Transfers that are not over, oldest first: what appexd (re)starts.
    public func unfinishedTransfers() throws -> [TransferRecord] {
        try read("list unfinished transfers") { db in
            try TransferRecord.filter(sql: "state IN ('pending', 'running')").order(Column("id")).fetchAll(db)
        }
    }

    /// The newest `limit` transfers, newest first, optionally of one extension.
    public func transfers(bundleIdentifier: String? = nil, limit: Int = 200) throws -> [TransferRecord] {
        try read("list transfers") { db in
            var q = TransferRecord.all()
            if let bundleIdentifier { q = q.filter(Column("bundleIdentifier") == bundleIdentifier) }
            return try q.order(Column("id").desc).limit(limit).fetchAll(db)
        }
    }

    /// Writes `transfer` back (state, bytes, reason, …); rows over the history limit go.
    public func updateTransfer(_ transfer: TransferRecord) throws {
        try write("update transfer") { db in
            try transfer.update(db)
            if transfer.state.isOver {
                try db.execute(
                    sql: """
                        DELETE FROM transfer WHERE delivered = 1 AND id <= (
                            SELECT id FROM transfer WHERE delivered = 1 ORDER BY id DESC LIMIT 1 OFFSET ?)
                        """, arguments: [Self.transferHistoryLimit])
            }
        }
    }

    /// The transfers of a session whose events are still to be delivered, if every one of
    /// them is over; nil while one is pending or running.
    public func undeliveredSession(bundleIdentifier: String, sessionIdentifier: String) throws -> [TransferRecord]? {
        try read("session transfers") { db in
            let rows =
                try TransferRecord
                .filter(
                    Column("bundleIdentifier") == bundleIdentifier && Column("sessionIdentifier") == sessionIdentifier
                        && Column("delivered") == false
                )
                .order(Column("id")).fetchAll(db)
            return rows.isEmpty || rows.contains { !$0.state.isOver } ? nil : rows
        }
    }

    /// (bundle, session) pairs whose transfers are all over and not delivered: events a
    /// restarted appexd still owes.
    public func sessionsOwingEvents() throws -> [(bundleIdentifier: String, sessionIdentifier: String)] {
        try read("sessions owing events") { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT bundleIdentifier, sessionIdentifier FROM transfer WHERE delivered = 0
                    GROUP BY bundleIdentifier, sessionIdentifier
                    HAVING SUM(state IN ('pending', 'running')) = 0
                    """)
            return rows.map { (bundleIdentifier: $0["bundleIdentifier"], sessionIdentifier: $0["sessionIdentifier"]) }
        }
    }

    public func markDelivered(_ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try write("mark transfers delivered") { db in
            try TransferRecord.filter(ids.contains(Column("id"))).updateAll(db, Column("delivered").set(to: true))
        }
    }

    /// Bytes moved by `bundleIdentifier`'s transfers created since `since` (the quota's window).
    public func transferBytes(bundleIdentifier: String, since: Date) throws -> Int64 {
        try read("transfer bytes") { db in
            try Int64.fetchOne(
                db, sql: "SELECT COALESCE(SUM(bytes), 0) FROM transfer WHERE bundleIdentifier = ? AND createdAt >= ?",
                arguments: [bundleIdentifier, since]) ?? 0
        }
    }
}
