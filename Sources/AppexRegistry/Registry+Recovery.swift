import AppexStateDirectory
import GRDB

#if canImport(Glibc)
import Glibc
#endif

extension Registry {
    /// Removes what an interrupted install or uninstall left: everything in staging, any copy
    /// no row refers to, and data containers an uninstall detached. Runs under the bundles lock, so it never takes a live install's
    /// files: that install holds the lock until its row is committed and its old copy gone.
    static func recover(stateDirectory: String, database: DatabasePool) throws -> RecoveryReport {
        var report = RecoveryReport()
        let bundlesPath = stateDirectory + "/bundles"
        let bundles = try openBundles(stateDirectory: stateDirectory)
        defer { DirectoryFD.close(bundles) }
        try BundlesLock.withLock(bundles: bundles, path: bundlesPath + "/.lock") {
            try removeLeftovers(stateDirectory: stateDirectory, bundles: bundles, database: database, report: &report)
        }
        return report
    }

    private static func removeLeftovers(
        stateDirectory: String, bundles: Int32, database: DatabasePool,
        report: inout RecoveryReport
    ) throws {
        let bundlesPath = stateDirectory + "/bundles"

        let staging = try DirectoryFD.open(stagingName, in: bundles, path: bundlesPath + "/.staging")
        defer { DirectoryFD.close(staging) }
        for name in try DirectoryFD.names(in: staging, path: bundlesPath + "/.staging") ?? [] {
            let path = bundlesPath + "/.staging/" + name.display
            try DirectoryFD.removeTree(name, in: staging, path: path)
            report.removedStaging.append(path)
        }

        let generations = try databaseCall("read generations") {
            try database.read { db in
                Dictionary(uniqueKeysWithValues: try ExtensionRecord.fetchAll(db).map { ($0.bundleIdentifier, $0) })
            }
        }
        for name in try DirectoryFD.names(in: bundles, path: bundlesPath) ?? [] where !name.isDotted {
            let path = bundlesPath + "/" + name.display
            guard let identifier = name.string, let record = generations[identifier] else {
                try DirectoryFD.removeTree(name, in: bundles, path: path)
                report.removedOrphans.append(path)
                continue
            }
            let idFD = try DirectoryFD.open(name, in: bundles, path: path)
            defer { DirectoryFD.close(idFD) }
            for child in try DirectoryFD.names(in: idFD, path: path) ?? [] where child.string != String(record.generation) {
                try DirectoryFD.removeTree(child, in: idFD, path: path + "/" + child.display)
                report.removedOrphans.append(path + "/" + child.display)
            }
        }
        // Data containers an uninstall detached and could not finish removing. A failure here
        // must not keep the registry from opening: what is left is tried again next time.
        do {
            report.removedData = try ContainerStore(stateRoot: stateDirectory).removeDetachedContainers()
        } catch {
            report.dataLeftBehind = "\(error)"
        }
        for record in generations.values.sorted(by: { $0.bundleIdentifier < $1.bundleIdentifier }) {
            var st = stat()
            if lstat(stateDirectory + "/" + record.bundlePath, &st) != 0 {
                report.missingCopies.append(record.bundleIdentifier)
            }
        }
    }
}
