/// Bundle identifiers name directories under the state root (containers, logs, cgroups), so
/// they must be safe as a single path component, whatever Apple's tools would tolerate.
public enum BundleIdentifierRules {
    /// Apple allows A–Z, a–z, 0–9, hyphen and period in bundle identifiers.
    public static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", ".": true
        default: false
        }
    }

    public static let maximumLength = 255

    /// Why `identifier` cannot be a directory name, or nil when it can.
    /// Checked on the UTF-8 bytes (all that is allowed is ASCII): `String.contains(String)`
    /// comes from the string-processing library, whose first use in a process instantiates its
    /// generic searchers; this runs several times on every `appex run`.
    public static func pathSafetyProblem(_ identifier: String) -> String? {
        let bytes = identifier.utf8
        if bytes.isEmpty { return "is empty" }
        if bytes.count > maximumLength { return "is longer than \(maximumLength) bytes" }
        if bytes.contains(0) { return "contains a NUL byte" }
        if bytes.contains(UInt8(ascii: "/")) { return "contains '/'" }
        var previous: UInt8 = 0
        for b in bytes {
            if b == UInt8(ascii: "."), previous == b { return "contains '..'" }
            previous = b
        }
        if bytes.first == UInt8(ascii: ".") { return "starts with '.'" }
        if let bad = identifier.unicodeScalars.first(where: { !isAllowed($0) }) {
            return "contains '\(bad.escaped(asASCII: true))' (allowed: letters, digits, '-', '.')"
        }
        return nil
    }

    /// Throws when the identifier is unsafe; for code about to use it as a path component.
    public static func requireSafe(_ identifier: String) throws -> String {
        if let problem = pathSafetyProblem(identifier) {
            throw UnsafeIdentifierError(identifier: identifier, problem: problem)
        }
        return identifier
    }
}

public struct UnsafeIdentifierError: Error, Sendable, CustomStringConvertible {
    public var identifier: String
    public var problem: String
    public var description: String { "identifier \"\(identifier)\" \(problem)" }
}
