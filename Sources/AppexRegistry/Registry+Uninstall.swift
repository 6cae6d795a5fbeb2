import AppexSandbox
import GRDB

extension Registry {
    /// Uninstalls the extension `identifier`, or every extension of the containing app
    /// `identifier`. Returns the extension identifiers removed.
    ///
    /// The data container (`<state>/containers/<id>`) is removed only when `removeData` is
    /// true, and first, with the directories of the app groups the uninstall releases (their
    /// owner's last extension goes) that no other installed extension declares: if that fails the extension stays installed and the call can be
    /// repeated. Then the rows go (an app's row with its last extension), then the copies; a
    /// crash after the commit leaves copies that the next open removes. Stopping a running
    /// instance first is the supervisor's job.
    @discardableResult
    public func uninstall(_ identifier: String, removeData: Bool) throws -> [String] {
        try withBundlesLocked { bundles in
            let targets = try read("look up \(identifier)") { db -> [ExtensionRecord]? in
                if let record = try ExtensionRecord.fetchOne(db, key: identifier) { return [record] }
                guard try AppRecord.exists(db, key: identifier) else { return nil }
                return try ExtensionRecord.filter(Column("containingAppIdentifier") == identifier).fetchAll(db)
            }
            guard let targets else { throw RegistryError.unknownExtension(identifier) }

            if removeData {
                let containers = ContainerStore(stateRoot: stateDirectory)
                for record in targets {
                    do {
                        try containers.removeContainer(for: record.bundleIdentifier)
                    } catch {
                        throw RegistryError.containerRemoval(identifier: record.bundleIdentifier, message: "\(error)")
                    }
                }
                for group in try appGroupsLeftUnused(without: targets) {
                    do {
                        try containers.removeGroup(group)
                    } catch {
                        throw RegistryError.containerRemoval(identifier: group, message: "\(error)")
                    }
                }
            }
            let ids = targets.map(\.bundleIdentifier)
            try write("uninstall \(identifier)") { db in
                _ = try ExtensionRecord.deleteAll(db, keys: ids)
                let apps = Set(targets.compactMap(\.containingAppIdentifier) + [identifier])
                for app in apps where try ExtensionRecord.filter(Column("containingAppIdentifier") == app).fetchCount(db) == 0 {
                    _ = try AppRecord.deleteOne(db, key: app)
                }
            }
            for id in ids {
                try? DirectoryFD.removeTree(EntryName(id), in: bundles, path: bundlesDirectory + "/" + id)
            }
            return ids.sorted()
        }
    }
}
