import Foundation
import Testing

@testable import AppexRegistry

/// Issue 30, finding 5: a bundle joins an app group only through what an administrator did
/// (installing it from the group's owning app, or a grant in appexd's configuration), never
/// by declaring the group itself.
@Suite("App group membership")
struct AppGroupMembershipTests {
    static let group = "group.shared.x"

    /// Gives the bundle at `relative` an Entitlements.plist declaring `groups`.
    static func entitle(_ scratch: Scratch, _ relative: String, _ groups: [String]) throws {
        let list = groups.map { "<string>\($0)</string>" }.joined()
        try scratch.write(
            relative + "/Entitlements.plist",
            """
            <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>
            <key>com.apple.security.application-groups</key><array>\(list)</array></dict></plist>
            """)
    }

    /// `Victim.app` (com.victim) with plug-ins `ids`, each declaring the group.
    static func victim(_ scratch: Scratch, plugIns ids: [String]) throws -> String {
        let app = try scratch.makeApp("src/Victim.app", identifier: "com.victim", plugIns: ids)
        for id in ids { try entitle(scratch, "src/Victim.app/PlugIns/\(id.split(separator: ".").last!).appex", [group]) }
        return app
    }

    /// A bare `A.appex` (com.attacker.a) declaring the group.
    static func attacker(_ scratch: Scratch) throws -> String {
        let bundle = try scratch.makeAppex("src/A.appex", identifier: "com.attacker.a")
        try entitle(scratch, "src/A.appex", [group])
        return bundle
    }

    @Test("the rule: grants, the owner's extensions, a claim of an unowned group, refusals")
    func decisions() {
        let m = AppGroupMembership(
            owners: ["g.owned": "com.victim"],
            grants: AppGroupGrants(["g.owned": ["com.attacker.a"], "g.configured": ["com.tools"]]))
        #expect(m.decide(group: "g.owned", bundle: "com.victim.v", app: "com.victim") == .member)
        #expect(m.decide(group: "g.owned", bundle: "com.attacker.a", app: nil) == .member)
        #expect(m.decide(group: "g.configured", bundle: "com.tools.w", app: "com.tools") == .member)
        #expect(m.decide(group: "g.free", bundle: "com.other.w", app: "com.other") == .claim(app: "com.other"))

        // Nobody claims a configured group; a bare bundle never claims.
        guard case .refused(let configured) = m.decide(group: "g.configured", bundle: "com.other.w", app: "com.other") else {
            Issue.record("an app outside a configured group's grant joined it")
            return
        }
        #expect(configured.contains("\"com.tools\""))
        guard case .refused(let bare) = m.decide(group: "g.free", bundle: "com.attacker.b", app: nil) else {
            Issue.record("a bare bundle joined an unowned group by naming it")
            return
        }
        #expect(bare.contains("bare bundle \"com.attacker.b\"") && bare.contains("\"g.free\""))
        guard case .refused(let owned) = m.decide(group: "g.owned", bundle: "com.other.w", app: "com.other") else {
            Issue.record("another app's extension joined an owned group")
            return
        }
        #expect(owned.contains("\"g.owned\"") && owned.contains("\"com.other.w\"") && owned.contains("containing app \"com.victim\""))
        #expect(m.members(of: ["g.owned", "g.free", "g.configured"], bundle: "com.victim.v", app: "com.victim") == ["g.owned"])
    }

    @Test("a bare bundle declaring another app's group is refused at install, naming the group, itself and the owner")
    func bareBundleIsRefused() throws {
        let scratch = try Scratch()
        let registry = try Registry(stateDirectory: scratch.state)
        try registry.install(path: try Self.victim(scratch, plugIns: ["com.victim.v"]))
        #expect(try registry.appGroupMembership(grants: AppGroupGrants()).owners == [Self.group: "com.victim"])

        let source = try Self.attacker(scratch)
        let refused = try #require(refusal { try registry.install(path: source) })
        let finding = try #require(refused.flatMap(\.findings).first { $0.code == "install.app-group" })
        #expect(finding.keyPath.description == "com.apple.security.application-groups:0")
        for name in [Self.group, "com.attacker.a", "com.victim"] { #expect(finding.message.contains("\"\(name)\""), "\(finding)") }
        #expect(try registry.list().map(\.bundleIdentifier) == ["com.victim.v"])

        // The same from another containing app.
        let other = try scratch.makeApp("src/Other.app", identifier: "com.other", plugIns: ["com.other.w"])
        try Self.entitle(scratch, "src/Other.app/PlugIns/w.appex", [Self.group])
        #expect(refusal { try registry.install(path: other) }?.flatMap(\.findings).contains { $0.code == "install.app-group" } == true)
        #expect(try registry.apps().map(\.bundleIdentifier) == ["com.victim"])
    }

    @Test("a second extension of the owning app joins; a granted bare bundle joins")
    func ownersExtensionsAndGrantsJoin() throws {
        let scratch = try Scratch()
        let registry = try Registry(stateDirectory: scratch.state)
        try registry.install(path: try Self.victim(scratch, plugIns: ["com.victim.v"]))
        try registry.install(path: try Self.victim(scratch, plugIns: ["com.victim.v", "com.victim.w"]))
        let membership = try registry.appGroupMembership(grants: AppGroupGrants())
        #expect(membership.members(of: [Self.group], bundle: "com.victim.w", app: "com.victim") == [Self.group])
        #expect(try registry.enable("com.victim.w").isEnabled)

        let grants = AppGroupGrants([Self.group: ["com.attacker.a"]])
        let installed = try registry.install(path: try Self.attacker(scratch), options: InstallOptions(appGroupGrants: grants))
        #expect(installed.extensions.map(\.bundleIdentifier) == ["com.attacker.a"])
        #expect(try registry.enable("com.attacker.a", appGroupGrants: grants).isEnabled)
        // A grant adds members; the owner stays.
        #expect(try registry.appGroupMembership(grants: grants).owners == [Self.group: "com.victim"])
    }

    @Test("enable judges again: a grant withdrawn since the install refuses it, naming the group")
    func enableRejudges() throws {
        let scratch = try Scratch()
        let registry = try Registry(stateDirectory: scratch.state)
        let grants = AppGroupGrants([Self.group: ["com.attacker.a"]])
        try registry.install(path: try Self.attacker(scratch), options: InstallOptions(appGroupGrants: grants))
        do {
            try registry.enable("com.attacker.a")
            Issue.record("enabled without the grant")
        } catch RegistryError.appGroupRefused(let id, let reasons) {
            #expect(id == "com.attacker.a")
            #expect(reasons.count == 1 && reasons[0].contains("\"\(Self.group)\""))
        }
        #expect(try registry.extension(bundleIdentifier: "com.attacker.a").isEnabled == false)
    }

    @Test("uninstalling the owning app's last extension releases the group; its data stays unless data is removed")
    func uninstallReleases() throws {
        let scratch = try Scratch()
        let registry = try Registry(stateDirectory: scratch.state)
        let kept = scratch.state + "/groups/\(Self.group)/kept"
        try registry.install(path: try Self.victim(scratch, plugIns: ["com.victim.v", "com.victim.w"]))
        try scratch.write("state/groups/\(Self.group)/kept", "victim data")
        try registry.uninstall("com.victim.v", removeData: true)
        #expect(try registry.appGroupMembership(grants: AppGroupGrants()).owners == [Self.group: "com.victim"])
        #expect(FileManager.default.fileExists(atPath: kept), "its owner still has an extension")
        try registry.uninstall("com.victim.w", removeData: false)
        #expect(try registry.appGroupMembership(grants: AppGroupGrants()).owners.isEmpty)
        #expect(try scratch.read(kept) == "victim data", "kept, as a data container is")

        // The next app to declare it owns it, with what was kept.
        let other = try scratch.makeApp("src/Other.app", identifier: "com.other", plugIns: ["com.other.w"])
        try Self.entitle(scratch, "src/Other.app/PlugIns/w.appex", [Self.group])
        try registry.install(path: other)
        #expect(try registry.appGroupMembership(grants: AppGroupGrants()).owners == [Self.group: "com.other"])

        // Removing data removes the directory of a group the uninstall releases...
        try registry.uninstall("com.other", removeData: true)
        #expect(!FileManager.default.fileExists(atPath: scratch.state + "/groups/\(Self.group)"))
        #expect(try registry.appGroupMembership(grants: AppGroupGrants()).owners.isEmpty)

        // ...unless an installed extension still declares it (a granted one).
        try registry.install(path: try Self.victim(scratch, plugIns: ["com.victim.v"]))
        try registry.install(
            path: try Self.attacker(scratch), options: InstallOptions(appGroupGrants: AppGroupGrants([Self.group: ["com.attacker.a"]])))
        try scratch.write("state/groups/\(Self.group)/kept", "shared data")
        try registry.uninstall("com.victim", removeData: true)
        #expect(try scratch.read(kept) == "shared data")
    }

    @Test("a registry from before owners were recorded gets them from its installed copies, the earliest app first")
    func migrationBackfillsOwners() throws {
        let scratch = try Scratch()
        let registry = try Registry(stateDirectory: scratch.state)
        try registry.install(path: try Self.victim(scratch, plugIns: ["com.victim.v"]))
        // As before v4: the table and its migration record gone.
        try registry.database.write { db in
            try db.execute(sql: "DROP TABLE app_group; DELETE FROM grdb_migrations WHERE identifier LIKE 'v4:%'")
        }
        let reopened = try Registry(stateDirectory: scratch.state)
        #expect(try reopened.appGroupMembership(grants: AppGroupGrants()).owners == [Self.group: "com.victim"])
    }
}
