import AppexBundle

/// App groups appexd's configuration grants (`appGroups:` in appexd.yaml): group identifier →
/// the containing-app and bundle identifiers that may use it.
public struct AppGroupGrants: Sendable, Equatable {
    public var members: [String: Set<String>]

    public init(_ members: [String: Set<String>] = [:]) {
        self.members = members
    }

    /// Whether the configuration names `group` at all.
    public func configures(_ group: String) -> Bool { members[group] != nil }

    /// Whether the configuration lets `bundle` (installed from `app`, or bare) use `group`.
    public func grant(_ group: String, bundle: String, app: String?) -> Bool {
        guard let allowed = members[group] else { return false }
        return allowed.contains(bundle) || app.map(allowed.contains) == true
    }
}

/// Who may use an app group. A bundle names its groups itself, so a name proves nothing
/// (issue 30): membership comes from what an administrator did, never from what the bundle says.
///
/// - The first containing app to install an extension that declares an unconfigured group
///   owns it (`app_group` table) until its last extension is uninstalled; its extensions
///   are members.
/// - appexd's configuration grants groups to containing apps and bundles (`AppGroupGrants`);
///   a configured group is never claimed by an install, only its owner from before stays.
/// - Anyone else, bare bundles included, is refused.
public struct AppGroupMembership: Sendable {
    /// What one bundle asking for one group gets.
    public enum Decision: Sendable, Equatable {
        case member
        /// Not owned by anyone yet: `app` becomes its owner.
        case claim(app: String)
        case refused(String)
    }

    /// Group identifier → owning containing app.
    public var owners: [String: String]
    public var grants: AppGroupGrants

    public init(owners: [String: String] = [:], grants: AppGroupGrants = AppGroupGrants()) {
        self.owners = owners
        self.grants = grants
    }

    public func decide(group: String, bundle: String, app: String?) -> Decision {
        if grants.grant(group, bundle: bundle, app: app) { return .member }
        let owner = owners[group]
        if let app {
            if owner == app { return .member }
            if owner == nil && !grants.configures(group) { return .claim(app: app) }
        }
        let who = app.map { "\"\(bundle)\" (installed from containing app \"\($0)\")" } ?? "bare bundle \"\(bundle)\""
        var why: [String] = []
        if let owner { why.append("it belongs to containing app \"\(owner)\", which installed it first") }
        if let allowed = grants.members[group] {
            why.append("appexd's configuration grants it only to \(allowed.sorted().map { "\"\($0)\"" }.joined(separator: ", "))")
        } else if owner == nil {
            why.append("no containing app owns it, and a bare bundle joins a group only by a grant")
        }
        return .refused(
            "\(who) may not use app group \"\(group)\": \(why.joined(separator: "; ")). "
                + "A group is shared only by the extensions of the containing app that owns it and by those "
                + "appexd's configuration grants it to (appGroups: in appexd.yaml)")
    }

    /// The groups of `groups` that `bundle` is a member of now (claims are not made here).
    public func members(of groups: [String], bundle: String, app: String?) -> [String] {
        groups.filter { decide(group: $0, bundle: bundle, app: app) == .member }
    }

    /// The groups a bundle declares that name a directory (the validator refuses the others).
    static func declared(by bundle: ExtensionBundle) -> [(index: Int, group: String)] {
        bundle.entitlements.applicationGroups.enumerated().compactMap { index, group in
            BundleIdentifierRules.pathSafetyProblem(group) == nil && BuildVariables.references(in: group).isEmpty
                ? (index, group) : nil
        }
    }

    /// Decides every group `bundle` declares: the refusals as install findings, at the
    /// entitlement's key path, and the claims made (recorded in `owners`, so a second bundle
    /// of the same install is judged against them).
    mutating func admit(_ bundle: ExtensionBundle, identifier: String, app: String?) -> (findings: [Finding], claims: [String]) {
        var findings: [Finding] = []
        var claims: [String] = []
        for (index, group) in Self.declared(by: bundle) {
            switch decide(group: group, bundle: identifier, app: app) {
            case .member: break
            case .claim(let owner):
                owners[group] = owner
                claims.append(group)
            case .refused(let reason):
                findings.append(.error("install.app-group", at: PlistKeyPath([Entitlements.applicationGroupsKey, String(index)]), reason))
            }
        }
        return (findings, claims)
    }
}
