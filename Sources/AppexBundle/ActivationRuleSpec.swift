/// `NSExtensionActivationRule` as the bundle wrote it, before any interpretation.
///
/// The bundle model keeps the rule as data; `AppexActivation` compiles it (dictionary keys into
/// a typed rule, a format string into a predicate AST) and reports findings with key paths.
public enum ActivationRuleSpec: Sendable, Equatable {
    /// No rule: the extension point does not use one (widgets, keyboards, file providers).
    case none
    /// The dictionary form: `NSExtensionActivationSupports…` keys, values exactly as written.
    case dictionary([String: PlistValue])
    /// The NSPredicate format-string form, whitespace as written.
    case predicate(String)

    /// `none`, `dictionary` or `predicate`: the `activationRule.kind` of `appex info --json`.
    public var kind: String {
        switch self {
        case .none: "none"
        case .dictionary: "dictionary"
        case .predicate: "predicate"
        }
    }

    /// Where the rule lives in Info.plist.
    public static let keyPath: PlistKeyPath = "NSExtension:NSExtensionAttributes:NSExtensionActivationRule"
}
