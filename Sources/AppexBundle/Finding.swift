/// One validation result: what is wrong, how bad, and where.
///
/// Every check in Appex (bundle, entitlements, activation rule, policy) reports through this
/// type, so `appex validate` prints them alike and `--json` gives machines a stable `code`.
public struct Finding: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable, Comparable, Codable {
        /// Loads, but Apple's tools would warn (development-only rule, odd value type read leniently).
        case warning
        /// Refused: the bundle is not installed or launched.
        case error

        public static func < (a: Severity, b: Severity) -> Bool { a == .warning && b == .error }
    }

    public var severity: Severity
    /// Stable identifier of the rule, e.g. `activation.count-type`; documented in Docs/bundles.md.
    public var code: String
    /// Where in the plist (or which file) the problem is.
    public var keyPath: PlistKeyPath
    /// One sentence a person can act on.
    public var message: String

    public init(_ severity: Severity, code: String, at keyPath: PlistKeyPath, _ message: String) {
        self.severity = severity
        self.code = code
        self.keyPath = keyPath
        self.message = message
    }

    public static func error(_ code: String, at keyPath: PlistKeyPath, _ message: String) -> Finding {
        Finding(.error, code: code, at: keyPath, message)
    }

    public static func warning(_ code: String, at keyPath: PlistKeyPath, _ message: String) -> Finding {
        Finding(.warning, code: code, at: keyPath, message)
    }

    public var description: String { "\(severity): \(keyPath): \(message) [\(code)]" }
}

extension Array where Element == Finding {
    public var hasErrors: Bool { contains { $0.severity == .error } }
}
