/// Every policy Appex knows: the defaults, each extension point's policy and the syscall
/// groups, loaded from one or more policy directories (shipped first, overlays after).
public struct PolicySet: Sendable, Equatable {
    public var defaults: ExtensionPointPolicy
    /// Resolved policy per extension-point identifier.
    public var byExtensionPoint: [String: ExtensionPointPolicy]
    public var groups: [String: SyscallGroup]
    public var directories: [String]

    package init(
        defaults: ExtensionPointPolicy, byExtensionPoint: [String: ExtensionPointPolicy],
        groups: [String: SyscallGroup], directories: [String]
    ) {
        self.defaults = defaults
        self.byExtensionPoint = byExtensionPoint
        self.groups = groups
        self.directories = directories
    }

    public func policy(for extensionPoint: String) -> ExtensionPointPolicy? { byExtensionPoint[extensionPoint] }

    /// Only what resolving `extensionPoint` reads (`EffectivePolicy`): the defaults, that
    /// point's policy if one covers it, and the syscall groups the applying policy names.
    /// What `appex run` loads from the cache (`PolicyLocator.load(overlays:only:)`).
    public func narrowed(to extensionPoint: String) -> PolicySet {
        let found = byExtensionPoint[extensionPoint]
        var kept: [String: SyscallGroup] = [:]
        for denial in (found ?? defaults).deniedSyscalls { kept[denial.group] = groups[denial.group] }
        return PolicySet(
            defaults: defaults, byExtensionPoint: found.map { [extensionPoint: $0] } ?? [:],
            groups: kept, directories: directories)
    }

    /// Distinct extension-point policies, ordered by their first identifier.
    public var extensionPointPolicies: [ExtensionPointPolicy] {
        var seen = Set<[String]>()
        return byExtensionPoint.values.filter { seen.insert($0.extensionPoints).inserted }
            .sorted { ($0.extensionPoints.first ?? "") < ($1.extensionPoints.first ?? "") }
    }
}
