import AppexStateDirectory
import GRDB

extension Registry {
    /// Uninstalls the extension `identifier`, or every extension of the containing app
    /// `identifier`. Returns the extension identifiers removed.
    ///
    /// With `removeData` each data container is first renamed out of use
    /// (`ContainerStore.detachContainer`), one step each. Then the rows go in one commit (an
    /// app's row with its last extension); if a rename or the commit fails, the renames are
    /// undone and the extensions stay installed with all their data. After the commit the
    /// copies go, then the detached containers and the directories of the app groups the
    /// uninstall released (their owner's last extension went) that no other installed
    /// extension declares. A container or group that cannot be removed then is reported
    /// (`RegistryError.dataLeftBehind`: the extensions are uninstalled all the same); a
    /// detached container is removed when the registry next opens. Stopping a running
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

            let containers = ContainerStore(stateRoot: stateDirectory)
            var detached: [DetachedContainer] = []
            func undoDetach() { for d in detached.reversed() { try? containers.reattach(d) } }
            if removeData {
                for record in targets {
                    do {
                        if let d = try containers.detachContainer(for: record.bundleIdentifier) { detached.append(d) }
                    } catch {
                        undoDetach()
                        throw RegistryError.containerRemoval(identifier: record.bundleIdentifier, message: "\(error)")
                    }
                }
            }
            let releasedGroups: [String]
            do {
                releasedGroups = removeData ? try appGroupsLeftUnused(without: targets) : []
            } catch {
                undoDetach()
                throw error
            }
            let ids = targets.map(\.bundleIdentifier)
            do {
                try write("uninstall \(identifier)") { db in
                    _ = try ExtensionRecord.deleteAll(db, keys: ids)
                    let apps = Set(targets.compactMap(\.containingAppIdentifier) + [identifier])
                    for app in apps where try ExtensionRecord.filter(Column("containingAppIdentifier") == app).fetchCount(db) == 0 {
                        _ = try AppRecord.deleteOne(db, key: app)
                    }
                }
            } catch {
                undoDetach()
                throw error
            }
            for id in ids {
                try? DirectoryFD.removeTree(EntryName(id), in: bundles, path: bundlesDirectory + "/" + id)
            }
            var leftBehind: RegistryError?
            for d in detached {
                do {
                    try containers.removeDetached(d)
                } catch {
                    leftBehind = leftBehind ?? .dataLeftBehind(identifier: d.bundleIdentifier, path: d.path, message: "\(error)")
                }
            }
            for group in releasedGroups {
                do {
                    try containers.removeGroup(group)
                } catch {
                    leftBehind = leftBehind ?? .dataLeftBehind(identifier: group, path: stateDirectory + "/groups/" + group, message: "\(error)")
                }
            }
            if let leftBehind { throw leftBehind }
            return ids.sorted()
        }
    }
}
