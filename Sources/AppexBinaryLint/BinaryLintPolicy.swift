import AppexPolicy

/// The denials the check looks for: an effective policy's syscall rules, without the calls it
/// only logs (those run).
public struct BinaryLintPolicy: Sendable {
    /// The policy's title, for messages ("Share", "Default (no extension-point policy)").
    public var title: String
    /// The extension point it was resolved for; nil for the defaults of a bare executable.
    public var extensionPoint: String?
    public var denied: [String: SyscallRule]

    public init(_ effective: EffectivePolicy, extensionPoint: String?) {
        title = effective.policy.title
        self.extensionPoint = extensionPoint
        var denied: [String: SyscallRule] = [:]
        for rule in effective.syscallRules where rule.action != .log { denied[rule.name] = rule }
        self.denied = denied
    }

    /// What the denied call does to the extension, in words.
    static func consequence(_ action: SyscallAction) -> String {
        switch action {
        case .errno(let e): "it fails with \(ErrnoNames.name(e) ?? "errno \(e)")"
        case .notify(let e): "it fails with \(ErrnoNames.name(e) ?? "errno \(e)") and the supervisor records it"
        case .kill: "the extension is killed (seccomp-violation)"
        case .log: "it is logged"
        }
    }
}
