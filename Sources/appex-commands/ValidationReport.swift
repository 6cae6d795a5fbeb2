import AppexBinaryLint
import AppexBundle
import AppexPolicy

/// Everything `appex validate` checks about one bundle or plist: Apple's bundle rules, the
/// activation rule, and what its policy will and will not grant.
enum ValidationReport {
    static func findings(info: InfoPlist, bundle: ExtensionBundle?, policies: PolicySet?) -> [Finding] {
        let points = Set(policies?.byExtensionPoint.keys.map { $0 } ?? [])
        // RUNPATH entries are checked against the system paths the bundle's policy shows.
        var systemPaths = RunpathCheck.defaultSystemPaths
        if let policies, let point = info.extensionInfo?.pointIdentifier, BuildVariables.references(in: point).isEmpty {
            systemPaths =
                EffectivePolicy(extensionPoint: point, entitlements: bundle?.entitlements ?? Entitlements(), in: policies)
                .policy.readOnlyPaths
        }
        var out =
            bundle.map { BundleValidator.validate(bundle: $0, extraExtensionPoints: points, systemPaths: systemPaths) }
            ?? BundleValidator.validate(info: info, extraExtensionPoints: points)
        out += ActivationValidation.findings(for: info, bundle: bundle)
        if let policies, let point = info.extensionInfo?.pointIdentifier, BuildVariables.references(in: point).isEmpty {
            let effective = EffectivePolicy(extensionPoint: point, entitlements: bundle?.entitlements ?? Entitlements(), in: policies)
            if effective.usesDefaults, ExtensionPointCatalog.isKnown(point) {
                out.append(
                    .warning(
                        "policy.defaults", at: "NSExtension:NSExtensionPointIdentifier",
                        "no policy in Policies/ covers \"\(point)\"; the defaults apply"))
            }
            for refused in effective.refusedEntitlements {
                out.append(
                    .warning(
                        "policy.entitlement-refused", at: PlistKeyPath([refused]),
                        "the \(effective.policy.title) policy does not grant \(refused); it is ignored"))
            }
        }
        // The extension-safe API check: the executable's (and bundled libraries') imports
        // against the policy the bundle runs under, as warnings.
        if let bundle, let policies {
            let point = info.extensionInfo?.pointIdentifier.flatMap { BuildVariables.references(in: $0).isEmpty ? $0 : nil }
            let effective = EffectivePolicy(extensionPoint: point ?? "", entitlements: bundle.entitlements, in: policies)
            out += BinaryLinter.validationFindings(bundle: bundle, policy: BinaryLintPolicy(effective, extensionPoint: point))
        }
        return out.sorted { ($1.severity, $0.keyPath.description) < ($0.severity, $1.keyPath.description) }
    }
}
