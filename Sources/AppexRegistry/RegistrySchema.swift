import AppexBundle
import Foundation
import GRDB

/// The registry's tables, created and upgraded by GRDB migrations (each runs once, in order,
/// recorded in `grdb_migrations`). STRICT tables: a value of the wrong type is refused by
/// SQLite itself, not discovered later.
enum RegistrySchema {
    /// `stateDirectory`: where the installed copies are, which `v4` reads.
    static func migrator(stateDirectory: String) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: apps and extensions") { db in
            try db.execute(
                sql: """
                    CREATE TABLE app (
                        bundleIdentifier TEXT PRIMARY KEY NOT NULL CHECK (bundleIdentifier <> ''),
                        displayName      TEXT,
                        version          TEXT,   -- CFBundleVersion
                        shortVersion     TEXT,   -- CFBundleShortVersionString
                        sourcePath       TEXT NOT NULL,
                        installedAt      TEXT NOT NULL
                    ) STRICT;

                    CREATE TABLE extension (
                        bundleIdentifier        TEXT PRIMARY KEY NOT NULL CHECK (bundleIdentifier <> ''),
                        extensionPoint          TEXT NOT NULL,
                        displayName             TEXT,
                        version                 TEXT,
                        shortVersion            TEXT,
                        executable              TEXT NOT NULL,
                        -- bundles/<id>/<generation>/<Name>.appex, relative to the state directory
                        bundlePath              TEXT NOT NULL,
                        generation              INTEGER NOT NULL CHECK (generation > 0),
                        sourcePath              TEXT NOT NULL,
                        containingAppIdentifier TEXT REFERENCES app(bundleIdentifier) ON DELETE RESTRICT,
                        isEnabled               INTEGER NOT NULL DEFAULT 0 CHECK (isEnabled IN (0, 1)),
                        installedAt             TEXT NOT NULL,
                        contentDigest           TEXT NOT NULL
                    ) STRICT;

                    CREATE INDEX extension_containingApp ON extension(containingAppIdentifier);
                    """)
        }
        migrator.registerMigration("v2: history") { db in
            // What the supervisor saw, kept across restarts for reports (Docs/registry.md,
            // "History"): launches with their phases, requests with their outcome, and every
            // instance's end with its reason. No foreign keys: history outlives uninstalls.
            try db.execute(
                sql: """
                    CREATE TABLE launch (
                        id               INTEGER PRIMARY KEY,
                        bundleIdentifier TEXT NOT NULL,
                        version          TEXT,
                        time             TEXT NOT NULL,
                        phases           TEXT NOT NULL   -- "name=µs;..." in launch order
                    ) STRICT;

                    CREATE TABLE request (
                        id               INTEGER PRIMARY KEY,
                        bundleIdentifier TEXT NOT NULL,
                        time             TEXT NOT NULL,
                        outcome          TEXT NOT NULL,
                        reason           TEXT,
                        cold             INTEGER NOT NULL CHECK (cold IN (0, 1)),
                        totalMicros      INTEGER NOT NULL,
                        peakMemoryBytes  INTEGER
                    ) STRICT;

                    CREATE TABLE termination (
                        id               INTEGER PRIMARY KEY,
                        bundleIdentifier TEXT NOT NULL,
                        time             TEXT NOT NULL,
                        reason           TEXT NOT NULL,
                        message          TEXT NOT NULL,
                        signal           INTEGER,
                        exitStatus       INTEGER,
                        peakMemoryBytes  INTEGER,
                        requestsServed   INTEGER NOT NULL
                    ) STRICT;

                    CREATE INDEX launch_bundle ON launch(bundleIdentifier, id);
                    CREATE INDEX request_bundle ON request(bundleIdentifier, id);
                    CREATE INDEX termination_bundle ON termination(bundleIdentifier, id);
                    """)
        }
        migrator.registerMigration("v3: termination band, footprint, trigger to death") { db in
            try db.execute(
                sql: """
                    ALTER TABLE termination ADD COLUMN band INTEGER;
                    ALTER TABLE termination ADD COLUMN footprintBytes INTEGER;
                    ALTER TABLE termination ADD COLUMN triggerToDeathMicros INTEGER;
                    """)
        }
        migrator.registerMigration("v4: app group owners") { db in
            // The containing app that owns each app group (AppGroupMembership); it goes with the
            // app's row, i.e. with the app's last extension.
            try db.execute(
                sql: """
                    CREATE TABLE app_group (
                        groupIdentifier TEXT PRIMARY KEY NOT NULL CHECK (groupIdentifier <> ''),
                        ownerApp        TEXT NOT NULL REFERENCES app(bundleIdentifier) ON DELETE CASCADE,
                        claimedAt       TEXT NOT NULL
                    ) STRICT;

                    CREATE INDEX app_group_owner ON app_group(ownerApp);
                    """)
            try AppGroupRecord.backfill(db, stateDirectory: stateDirectory)
        }
        migrator.registerMigration("v5: termination time in microseconds") { db in
            // `time` keeps milliseconds; rows written before this get theirs from it, in whole
            // numbers (julianday's double is off by microseconds).
            try db.execute(
                sql: """
                    ALTER TABLE termination ADD COLUMN timeMicros INTEGER;
                    UPDATE termination SET timeMicros = CAST(strftime('%s', time) AS INTEGER) * 1000000
                                                      + CAST(substr(strftime('%f', time), 4) AS INTEGER) * 1000;
                    CREATE INDEX termination_time ON termination(timeMicros, id);
                    """)
        }
        migrator.registerMigration("v6: background transfers") { db in
            // Background transfers (Docs/transfers.md): one row each, from the extension's
            // ScheduleTransfer to the delivery of its session's events, then kept as history.
            // A restarted appexd starts again every row that is `pending` or `running`.
            try db.execute(
                sql: """
                    CREATE TABLE transfer (
                        id                INTEGER PRIMARY KEY,
                        bundleIdentifier  TEXT NOT NULL,
                        sessionIdentifier TEXT NOT NULL,
                        kind              TEXT NOT NULL CHECK (kind IN ('download', 'upload')),
                        url               TEXT NOT NULL,
                        method            TEXT NOT NULL,
                        headers           TEXT NOT NULL,   -- "Name: value" lines
                        appGroup          TEXT NOT NULL,
                        fileName          TEXT NOT NULL,
                        state             TEXT NOT NULL CHECK (state IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
                        reason            TEXT,
                        message           TEXT,
                        bytes             INTEGER NOT NULL DEFAULT 0,
                        httpStatus        INTEGER,
                        etag              TEXT,
                        attempts          INTEGER NOT NULL DEFAULT 0,
                        createdAt         TEXT NOT NULL,
                        endedAt           TEXT,
                        delivered         INTEGER NOT NULL DEFAULT 0 CHECK (delivered IN (0, 1))
                    ) STRICT;

                    CREATE INDEX transfer_session ON transfer(bundleIdentifier, sessionIdentifier, state);
                    CREATE INDEX transfer_state ON transfer(state, id);
                    """)
        }
        return migrator
    }
}

/// A containing app, kept while at least one of its extensions is installed.
struct AppRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "app"

    var bundleIdentifier: String
    var displayName: String?
    var version: String?
    var shortVersion: String?
    var sourcePath: String
    var installedAt: Date
}

/// An installed extension. `bundlePath` is relative to the state directory.
struct ExtensionRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "extension"

    var bundleIdentifier: String
    var extensionPoint: String
    var displayName: String?
    var version: String?
    var shortVersion: String?
    var executable: String
    var bundlePath: String
    var generation: Int
    var sourcePath: String
    var containingAppIdentifier: String?
    var isEnabled: Bool
    var installedAt: Date
    var contentDigest: String
}

/// An app group's owner: the containing app that first installed an extension declaring it.
struct AppGroupRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "app_group"

    var groupIdentifier: String
    var ownerApp: String
    var claimedAt: Date

    /// Owners for a registry made before `v4`: each app's installed extensions' groups, in
    /// install order, so the app that installed first owns a group two apps declare.
    static func backfill(_ db: Database, stateDirectory: String) throws {
        let records = try ExtensionRecord.filter(Column("containingAppIdentifier") != nil)
            .order(Column("installedAt"), Column("bundleIdentifier")).fetchAll(db)
        for record in records {
            guard let app = record.containingAppIdentifier,
                let bundle = try? ExtensionBundle.load(path: stateDirectory + "/" + record.bundlePath)
            else { continue }
            for (_, group) in AppGroupMembership.declared(by: bundle) {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO app_group (groupIdentifier, ownerApp, claimedAt) VALUES (?, ?, ?)",
                    arguments: [group, app, record.installedAt])
            }
        }
    }
}
