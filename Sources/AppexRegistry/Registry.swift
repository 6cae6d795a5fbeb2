import AppexBundle
import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

/// The installed extensions of one state directory: their rows in SQLite and their
/// root-owned copies beside it.
///
/// ```
/// <state>/registry.sqlite           root 0600 (its -wal and -shm too); WAL mode, synchronous=FULL, foreign keys on
/// <state>/bundles/                  root 0711: no one else lists what is installed
/// <state>/bundles/.lock             flock: installs, uninstalls and recovery, across processes
/// <state>/bundles/.staging/         root 0700: installs being copied; emptied on open
/// <state>/bundles/<id>/<gen>/<Name>.appex   the installed copy the row points at
/// ```
///
/// Install order: copy into staging, validate the copy, rename it into `bundles/<id>/<gen>`,
/// fsync, then commit the row. The commit is the switch: a crash before it leaves a copy no
/// row names; a crash after it leaves the previous generation. Opening removes both (under
/// the lock), so what a row names is always a complete copy.
public final class Registry: Sendable {
    public static let databaseName = "registry.sqlite"

    public let stateDirectory: String
    /// What opening cleaned up.
    public let recovery: RecoveryReport
    let database: DatabasePool

    public var databasePath: String { stateDirectory + "/" + Self.databaseName }
    public var bundlesDirectory: String { stateDirectory + "/bundles" }

    static let bundlesName = EntryName("bundles")
    static let stagingName = EntryName(".staging")
    static let lockName = EntryName(".lock")

    /// Opens (creating when needed) the registry of `stateDirectory`, migrates its schema and
    /// cleans up after a crashed predecessor.
    public init(stateDirectory: String) throws {
        let state = Self.absolute(stateDirectory)
        self.stateDirectory = state
        try Self.makeDirectories(state)
        let stateFD = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if stateFD < 0 { throw DirectoryFD.fail("open state directory", state) }
        defer { DirectoryFD.close(stateFD) }
        let bundles = try DirectoryFD.make(Self.bundlesName, in: stateFD, mode: 0o711, path: state + "/bundles")
        defer { DirectoryFD.close(bundles) }
        let staging = try DirectoryFD.make(Self.stagingName, in: bundles, mode: 0o700, path: state + "/bundles/.staging")
        DirectoryFD.close(staging)

        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        // Another process (appexd, an embedded supervisor) may hold the write lock briefly.
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // A committed install survives power loss, not only a killed process.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let path = state + "/" + Self.databaseName
        try Self.restrictDatabaseFiles(path)
        database = try Self.databaseCall("open \(path)") {
            let pool = try DatabasePool(path: path, configuration: configuration)
            try RegistrySchema.migrator(stateDirectory: state).migrate(pool)
            return pool
        }
        recovery = try Self.recover(stateDirectory: state, database: database)
    }

    // MARK: Queries

    /// Every installed extension, sorted by identifier.
    public func list() throws -> [InstalledExtension] {
        try read("list extensions") { db in
            try ExtensionRecord.order(Column("bundleIdentifier")).fetchAll(db)
        }.map { $0.installed(stateDirectory: stateDirectory) }
    }

    /// The installed extension `bundleIdentifier`; throws `unknownExtension` naming it.
    public func `extension`(bundleIdentifier: String) throws -> InstalledExtension {
        guard
            let record = try read(
                "look up \(bundleIdentifier)",
                { db in
                    try ExtensionRecord.fetchOne(db, key: bundleIdentifier)
                })
        else { throw RegistryError.unknownExtension(bundleIdentifier) }
        return record.installed(stateDirectory: stateDirectory)
    }

    /// Containing apps with installed extensions, sorted by identifier.
    public func apps() throws -> [InstalledApp] {
        let (apps, extensions) = try read("list apps") { db in
            (try AppRecord.order(Column("bundleIdentifier")).fetchAll(db), try ExtensionRecord.fetchAll(db))
        }
        return apps.map { app in
            InstalledApp(
                bundleIdentifier: app.bundleIdentifier, displayName: app.displayName, version: app.version,
                shortVersion: app.shortVersion, sourcePath: app.sourcePath, installedAt: app.installedAt,
                extensionIdentifiers: extensions.filter { $0.containingAppIdentifier == app.bundleIdentifier }
                    .map(\.bundleIdentifier).sorted())
        }
    }

    // MARK: Enable and disable

    /// Allows requests to the extension. Persisted at once. Refused (`appGroupRefused`) when
    /// it declares an app group it is not a member of under `appGroupGrants` (AppGroupMembership).
    @discardableResult
    public func enable(_ bundleIdentifier: String, appGroupGrants: AppGroupGrants = AppGroupGrants()) throws -> InstalledExtension {
        // The lock orders a claim made here against an install's.
        try withBundlesLocked { _ in try setEnabled(bundleIdentifier, true, appGroupGrants: appGroupGrants) }
    }

    /// Refuses further requests to the extension (a running instance is the supervisor's to stop).
    @discardableResult
    public func disable(_ bundleIdentifier: String) throws -> InstalledExtension {
        try setEnabled(bundleIdentifier, false)
    }

    private func setEnabled(
        _ bundleIdentifier: String, _ enabled: Bool,
        appGroupGrants: AppGroupGrants = AppGroupGrants()
    ) throws -> InstalledExtension {
        try write("\(enabled ? "enable" : "disable") \(bundleIdentifier)") { db in
            guard var record = try ExtensionRecord.fetchOne(db, key: bundleIdentifier) else {
                throw RegistryError.unknownExtension(bundleIdentifier)
            }
            if enabled { try admitAppGroups(record, grants: appGroupGrants, in: db) }
            if record.isEnabled != enabled {
                record.isEnabled = enabled
                try record.update(db)
            }
            return record
        }.installed(stateDirectory: stateDirectory)
    }

    // MARK: Integrity

    /// Everything wrong with the registry, empty when sound: SQLite's `integrity_check` and
    /// `foreign_key_check`, and every row whose installed copy is missing or no longer has the
    /// digest it was installed with.
    public func integrityProblems() throws -> [String] {
        let (integrity, foreignKeys, records) = try read("check integrity") { db in
            (
                try String.fetchAll(db, sql: "PRAGMA integrity_check"),
                try Row.fetchAll(db, sql: "PRAGMA foreign_key_check"),
                try ExtensionRecord.fetchAll(db)
            )
        }
        var problems = integrity == ["ok"] ? [] : integrity.map { "sqlite: \($0)" }
        problems += foreignKeys.map { "foreign key violation: \($0)" }
        for record in records.sorted(by: { $0.bundleIdentifier < $1.bundleIdentifier }) {
            let path = stateDirectory + "/" + record.bundlePath
            guard let digest = TreeDigest.digest(ofDirectoryAt: path) else {
                problems.append("\(record.bundleIdentifier): installed copy \(path) is missing or holds something the registry did not write")
                continue
            }
            if digest.description != record.contentDigest {
                problems.append("\(record.bundleIdentifier): installed copy \(path) has digest \(digest), installed as \(record.contentDigest)")
            }
        }
        return problems
    }

    // MARK: Helpers

    /// `path` made absolute and normalised lexically (`.`, `..`, repeated `/`). Symbolic links
    /// are left alone: the install must see that the bundle itself is one, and refuse it.
    static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var components: [Substring] = []
        for component in full.split(separator: "/") {
            switch component {
            case ".": continue
            case "..": _ = components.popLast()
            default: components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }

    /// Runs a database call, turning GRDB's errors into `RegistryError.database` and letting
    /// the registry's own errors through.
    static func databaseCall<T>(_ operation: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as RegistryError {
            throw error
        } catch {
            throw RegistryError.database(operation: operation, message: "\(error)")
        }
    }

    func read<T>(_ operation: String, _ body: (Database) throws -> T) throws -> T {
        try Self.databaseCall(operation) { try database.read(body) }
    }

    func write<T>(_ operation: String, _ body: (Database) throws -> T) throws -> T {
        try Self.databaseCall(operation) { try database.write(body) }
    }

    /// `mkdir -p` for the state directory (0755 where it creates one).
    static func makeDirectories(_ path: String) throws {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw DirectoryFD.fail("create state directory", prefix)
            }
        }
    }

    /// The database and its `-wal` and `-shm` files: 0600. SQLite gives a `-wal` or `-shm` it
    /// creates the database file's mode, so the file is made 0600 before SQLite first opens
    /// it; files an older version left wider are tightened.
    static func restrictDatabaseFiles(_ path: String) throws {
        for (file, create) in [(path, true), (path + "-wal", false), (path + "-shm", false)] {
            let fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0), 0o600)
            if fd < 0 {
                if errno == ENOENT { continue }
                throw DirectoryFD.fail("open", file)
            }
            defer { DirectoryFD.close(fd) }
            if fchmod(fd, 0o600) != 0 { throw DirectoryFD.fail("chmod", file) }
        }
    }

    /// Opens `<state>/bundles`, without following a symlink there.
    static func openBundles(stateDirectory: String) throws -> Int32 {
        let stateFD = open(stateDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if stateFD < 0 { throw DirectoryFD.fail("open state directory", stateDirectory) }
        defer { DirectoryFD.close(stateFD) }
        return try DirectoryFD.open(bundlesName, in: stateFD, path: stateDirectory + "/bundles")
    }

    /// Runs `body` with `<state>/bundles` open and the bundles lock held.
    func withBundlesLocked<T>(_ body: (_ bundles: Int32) throws -> T) throws -> T {
        let bundles = try Self.openBundles(stateDirectory: stateDirectory)
        defer { DirectoryFD.close(bundles) }
        return try BundlesLock.withLock(bundles: bundles, path: bundlesDirectory + "/.lock") { try body(bundles) }
    }
}
