import AppexActivation
import AppexBundle
import AppexPolicy
import AppexRegistry
import AppexSandbox

/// One installed extension as the supervisor uses it: the registry row, the installed copy
/// loaded once, its effective policy and sandbox, and its compiled activation rule. Built when
/// the supervisor starts or the registry changes, so a request pays for none of it. A class,
/// immutable: the request path looks an entry up several times, and a lookup then shares it
/// instead of copying every field (and retaining each reference in it).
final class CatalogEntry: Sendable {
    let installed: InstalledExtension
    let bundle: ExtensionBundle
    let policy: EffectivePolicy
    let spec: SandboxSpec
    /// nil: the rule does not compile (the install checks refuse that, so only a changed
    /// policy set can cause it); such an extension never activates.
    let rule: ActivationRule?
    let ruleProblem: String?
    /// App groups the bundle declares and its policy grants but it is not a member of: never
    /// mounted (the install and enable refuse them; the configuration may have changed since).
    let withheldGroups: [String]

    init(
        installed: InstalledExtension, bundle: ExtensionBundle, policy: EffectivePolicy, spec: SandboxSpec,
        rule: ActivationRule?, ruleProblem: String?, withheldGroups: [String]
    ) {
        self.installed = installed
        self.bundle = bundle
        self.policy = policy
        self.spec = spec
        self.rule = rule
        self.ruleProblem = ruleProblem
        self.withheldGroups = withheldGroups
    }

    var identifier: String { installed.bundleIdentifier }
    var lifecycle: ExtensionPointPolicy { policy.policy }

    /// Loads `installed` from its copy under the state directory.
    static func load(_ installed: InstalledExtension, policies: PolicySet, membership: AppGroupMembership) throws -> CatalogEntry {
        let bundle = try ExtensionBundle.load(path: installed.bundlePath)
        guard var policy = EffectivePolicy(bundle: bundle, in: policies) else {
            throw SupervisorError(
                "load \(installed.bundleIdentifier)",
                "no policy covers extension point \(installed.extensionPoint)")
        }
        let declared = policy.appGroups
        policy.appGroups = membership.members(
            of: declared, bundle: installed.bundleIdentifier,
            app: installed.containingAppIdentifier)
        let spec = try SandboxSpec(bundle: bundle, policy: policy)
        let (rule, findings) = Activation.rule(for: bundle)
        let problem = rule == nil ? (findings.first { $0.severity == .error }?.description ?? "the rule does not compile") : nil
        return CatalogEntry(
            installed: installed, bundle: bundle, policy: policy, spec: spec, rule: rule, ruleProblem: problem,
            withheldGroups: declared.filter { !policy.appGroups.contains($0) })
    }
}
