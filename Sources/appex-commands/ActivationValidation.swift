import AppexActivation
import AppexBundle

/// Activation-rule findings for `appex validate`: the rule compiled against the bundle's type
/// graph, its declared types, and stray `NSExtensionActivation…` attribute keys.
enum ActivationValidation {
    static func findings(for info: InfoPlist, bundle: ExtensionBundle?) -> [Finding] {
        Activation.rule(for: bundle ?? ExtensionBundle(path: "", info: info)).findings
    }
}
