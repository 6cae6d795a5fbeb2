import AppexBundle
import Foundation
import GRDB

// App-group membership as the registry keeps it: owners in `app_group`, judged by
// `AppGroupMembership` at install and at enable (the configuration may have changed since).

extension Registry {
    /// The owners recorded now, judged with `grants`: what the supervisor mounts.
    public func appGroupMembership(grants: AppGroupGrants) throws -> AppGroupMembership {
        try read("read app group owners") { db in try Self.appGroupMembership(db, grants: grants) }
    }

    static func appGroupMembership(_ db: Database, grants: AppGroupGrants) throws -> AppGroupMembership {
        let owners = try AppGroupRecord.fetchAll(db).map { ($0.groupIdentifier, $0.ownerApp) }
        return AppGroupMembership(owners: Dictionary(uniqueKeysWithValues: owners), grants: grants)
    }

    /// Records `app` as the owner of `groups`. The app's row must exist (it is the key).
    static func claim(_ groups: [String], for app: String, at date: Date, in db: Database) throws {
        for group in groups {
            try AppGroupRecord(groupIdentifier: group, ownerApp: app, claimedAt: date).insert(db)
        }
    }

    /// Admits the installed extension `record` to the groups its copy declares, claiming the
    /// unowned ones for its app, or throws `appGroupRefused` with every refusal.
    func admitAppGroups(_ record: ExtensionRecord, grants: AppGroupGrants, in db: Database) throws {
        let bundle = try ExtensionBundle.load(path: stateDirectory + "/" + record.bundlePath)
        var membership = try Self.appGroupMembership(db, grants: grants)
        let (findings, claims) = membership.admit(
            bundle, identifier: record.bundleIdentifier,
            app: record.containingAppIdentifier)
        guard findings.isEmpty else {
            throw RegistryError.appGroupRefused(identifier: record.bundleIdentifier, reasons: findings.map(\.message))
        }
        if let app = record.containingAppIdentifier { try Self.claim(claims, for: app, at: Date(), in: db) }
    }
}

extension Registry {
    /// The app groups whose owner loses its last extension when `targets` go, and which no
    /// other installed extension declares: their directories have no one left. Empty when an
    /// installed copy does not load (its groups are unknown, so nothing is called unused).
    func appGroupsLeftUnused(without targets: [ExtensionRecord]) throws -> [String] {
        let leaving = Set(targets.map(\.bundleIdentifier))
        let (released, remaining) = try read("look up app groups of \(leaving.sorted().joined(separator: ", "))") { db in
            let all = try ExtensionRecord.fetchAll(db)
            let emptied = Set(targets.compactMap(\.containingAppIdentifier)).filter { app in
                all.allSatisfy { $0.containingAppIdentifier != app || leaving.contains($0.bundleIdentifier) }
            }
            let released = try AppGroupRecord.fetchAll(db).filter { emptied.contains($0.ownerApp) }.map(\.groupIdentifier)
            return (released, all.filter { !leaving.contains($0.bundleIdentifier) })
        }
        guard !released.isEmpty else { return [] }
        var declared = Set<String>()
        for record in remaining {
            guard let bundle = try? ExtensionBundle.load(path: stateDirectory + "/" + record.bundlePath) else { return [] }
            declared.formUnion(AppGroupMembership.declared(by: bundle).map(\.group))
        }
        return released.filter { !declared.contains($0) }.sorted()
    }
}
