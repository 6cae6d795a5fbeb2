import AppexBundle
import AppexPolicy

extension ConfigurationValues {
    /// A mapping whose keys are identifiers (`appGroups:`, `apps:`): any key may be named, but
    /// each must be path-safe, as it names directories or rows. `expected` completes "expected
    /// a mapping of …"; `kind` names a key in its error; `value` reads each key's value.
    static func identifierMapping<Value>(
        _ node: YAMLNode, expected: String, kind: String, value: (YAMLNode) throws -> Value
    ) throws -> [String: Value] {
        guard let mapping = node.node.mapping else { throw node.error("expected a mapping of \(expected)") }
        // The walker still refuses duplicates and non-string keys.
        let names = Set(mapping.compactMap { $0.key.scalar?.string })
        var result: [String: Value] = [:]
        for (key, child) in try node.mapping(allowed: names) {
            if let problem = BundleIdentifierRules.pathSafetyProblem(key) {
                throw child.error("\(kind) \"\(key)\" \(problem)")
            }
            result[key] = try value(child)
        }
        return result
    }
}
