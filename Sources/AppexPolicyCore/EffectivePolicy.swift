import AppexBundle

/// One denied system call, expanded from its group.
public struct SyscallRule: Sendable, Hashable {
    public var name: String
    public var action: SyscallAction
    public var group: String
}

/// What one extension actually runs under: defaults ← extension point ← entitlements.
///
/// Entitlements only ever narrow to what the policy grants: a bundle asking for an app group
/// the policy does not allow gets no group directory, and the refusal is listed.
public struct EffectivePolicy: Sendable {
    public var extensionPoint: String
    public var policy: ExtensionPointPolicy
    /// True when no policy file covers the extension point and the defaults apply.
    public var usesDefaults: Bool
    public var grantedEntitlements: [String]
    /// Requested by the bundle, not grantable by the policy: ignored.
    public var refusedEntitlements: [String]
    /// App groups whose directories the extension gets.
    public var appGroups: [String]
    public var hostNetwork: Bool
    /// Every denied syscall with its action, sorted by name. A syscall in two groups gets the
    /// stricter action (kill over errno over notify over log).
    public var syscallRules: [SyscallRule]

    /// The cgroup hard limit: the footprint limit plus the page-cache allowance.
    public var cgroupMemoryMax: Int64 { policy.memory.activeHardLimit.bytes + policy.memory.pageCacheAllowance.bytes }
    /// The cgroup soft limit, where memory warnings start.
    public var cgroupMemoryHigh: Int64 { policy.memory.activeSoftLimit.bytes + policy.memory.pageCacheAllowance.bytes }

    public init(extensionPoint: String, entitlements: Entitlements = Entitlements(), in set: PolicySet) {
        self.extensionPoint = extensionPoint
        let found = set.policy(for: extensionPoint)
        policy = found ?? set.defaults
        usesDefaults = found == nil

        let grantable = Set(policy.grantableEntitlements)
        let requested = entitlements.requestedKeys
        grantedEntitlements = requested.filter { grantable.contains($0) }
        refusedEntitlements = requested.filter { !grantable.contains($0) }
        appGroups =
            grantable.contains(Entitlements.applicationGroupsKey)
            ? entitlements.applicationGroups.filter {
                BundleIdentifierRules.pathSafetyProblem($0) == nil && BuildVariables.references(in: $0).isEmpty
            }
            : []
        hostNetwork =
            policy.network == .entitled
            && (grantedEntitlements.contains(Entitlements.networkClientKey) || grantedEntitlements.contains(Entitlements.networkServerKey))

        var rules: [String: SyscallRule] = [:]
        for denial in policy.deniedSyscalls {
            for call in set.groups[denial.group]?.syscalls ?? [] {
                if let existing = rules[call], existing.action.strictness >= denial.action.strictness { continue }
                rules[call] = SyscallRule(name: call, action: denial.action, group: denial.group)
            }
        }
        syscallRules = rules.values.sorted { $0.name < $1.name }
    }

    /// Resolves the policy of a loaded bundle; nil when it declares no extension point.
    public init?(bundle: ExtensionBundle, in set: PolicySet) {
        guard let point = bundle.info.extensionInfo?.pointIdentifier else { return nil }
        self.init(extensionPoint: point, entitlements: bundle.entitlements, in: set)
    }
}
