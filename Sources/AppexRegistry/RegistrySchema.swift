import Foundation
import GRDB

/// The registry's tables, created and upgraded by GRDB migrations (each runs once, in order,
/// recorded in `grdb_migrations`). STRICT tables: a value of the wrong type is refused by
/// SQLite itself, not discovered later.
enum RegistrySchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: apps and extensions") { db in
            try db.execute(sql: """
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
            try db.execute(sql: """
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
            try db.execute(sql: """
                ALTER TABLE termination ADD COLUMN band INTEGER;
                ALTER TABLE termination ADD COLUMN footprintBytes INTEGER;
                ALTER TABLE termination ADD COLUMN triggerToDeathMicros INTEGER;
                """)
        }
        migrator.registerMigration("v4: termination time in microseconds") { db in
            // `time` keeps milliseconds; rows written before this get theirs from it, in whole
            // numbers (julianday's double is off by microseconds).
            try db.execute(sql: """
                ALTER TABLE termination ADD COLUMN timeMicros INTEGER;
                UPDATE termination SET timeMicros = CAST(strftime('%s', time) AS INTEGER) * 1000000
                                                  + CAST(substr(strftime('%f', time), 4) AS INTEGER) * 1000;
                CREATE INDEX termination_time ON termination(timeMicros, id);
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
