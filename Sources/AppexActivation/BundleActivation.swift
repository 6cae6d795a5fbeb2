import AppexBundle

/// The one question hosts and the supervisor ask: do these items activate this bundle?
public enum Activation {
    /// Keys Apple defines directly under `NSExtensionAttributes` that start with
    /// `NSExtensionActivation`; any other such key is a likely typo or an invented key.
    public static let knownAttributeKeys: Set<String> = ["NSExtensionActivationRule"]

    /// Findings about `NSExtensionActivation…` keys placed in `NSExtensionAttributes` that Apple
    /// does not define (corpus 058's `NSExtensionActivationSupportsMultipleAttachments`).
    /// Warning, not error: Apple ignores unknown keys, so the bundle still works there.
    public static func checkAttributes(
        _ attributes: [String: PlistValue],
        at keyPath: PlistKeyPath = "NSExtension:NSExtensionAttributes"
    ) -> [Finding] {
        attributes.keys.sorted().filter { $0.hasPrefix("NSExtensionActivation") && !knownAttributeKeys.contains($0) }.map { key in
            let hint = DictionaryRule.knownKeys.contains(key) ? "; it belongs inside NSExtensionActivationRule" : ""
            return .warning("activation.unknown-key", at: keyPath.appending(key), "unknown key \"\(key)\" is ignored\(hint)")
        }
    }

    /// The type graph a bundle sees: `base` plus the bundle's exported and imported types.
    public static func typeGraph(for bundle: ExtensionBundle, base: UTTypeGraph = .system) -> (types: UTTypeGraph, findings: [Finding]) {
        typeGraph(for: bundle.info, base: base)
    }

    /// The type graph an Info.plist sees: `base` plus its exported and imported types.
    public static func typeGraph(for info: InfoPlist, base: UTTypeGraph = .system) -> (types: UTTypeGraph, findings: [Finding]) {
        var graph = base
        var findings = graph.declare(bundleDeclarations: info.exportedTypeDeclarations, at: "UTExportedTypeDeclarations")
        findings += graph.declare(bundleDeclarations: info.importedTypeDeclarations, at: "UTImportedTypeDeclarations")
        return (graph, findings)
    }

    /// Compiles a bundle's rule against its type graph; all findings (types, attributes, rule).
    public static func rule(for bundle: ExtensionBundle, base: UTTypeGraph = .system) -> (rule: ActivationRule?, findings: [Finding]) {
        rule(for: bundle.info, base: base)
    }

    /// Same, from an Info.plist alone (what `appex validate` and `appex info` hold).
    public static func rule(for info: InfoPlist, base: UTTypeGraph = .system) -> (rule: ActivationRule?, findings: [Finding]) {
        let (types, typeFindings) = typeGraph(for: info, base: base)
        let spec = info.extensionInfo?.activationRule ?? .none
        let (rule, ruleFindings) = ActivationRule.compile(spec, at: ActivationRuleSpec.keyPath, types: types)
        let attributeFindings = checkAttributes(info.extensionInfo?.attributes ?? [:])
        return (rule, typeFindings + attributeFindings + ruleFindings)
    }

    /// Do these items activate this bundle? A rule that does not compile never activates, and
    /// the reason says why. Throws `ItemsError` for a payload over the limits.
    public static func check(_ items: ActivationItems, against bundle: ExtensionBundle, base: UTTypeGraph = .system) throws -> ActivationResult {
        let (rule, findings) = rule(for: bundle, base: base)
        guard let rule else {
            let first = findings.first { $0.severity == .error }
            return .notActivated("the bundle's activation rule is invalid: \(first?.description ?? "unknown error")")
        }
        return try rule.evaluate(items)
    }
}

extension ActivationRule {
    /// JSON-ready description for `appex info --json`: `kind` (`none`, `dictionary`,
    /// `predicate`), `text` (canonical predicate) or the dictionary's effective settings.
    public var jsonObject: [String: Any] {
        switch form {
        case .none:
            return ["kind": "none"]
        case .predicate(let p):
            return ["kind": "predicate", "text": p.description]
        case .dictionary(let d):
            var supports: [String: Any] = [:]
            for c in DictionaryRule.Category.allCases {
                if c == .text { supports["text"] = d.supports(.text) } else { supports[c.rawValue] = d.maxCounts[c] ?? 0 }
            }
            var out: [String: Any] = ["kind": "dictionary", "version": d.version, "strict": d.strict, "maxCounts": supports]
            if let n = d.attachmentsMaxCount { out["attachmentsMaxCount"] = n }
            if let n = d.attachmentsMinCount { out["attachmentsMinCount"] = n }
            return out
        }
    }
}
