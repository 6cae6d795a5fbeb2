import AppexBundle
import AppexPolicy

extension ConfigurationValues {
    /// `appGroups:`, a mapping of app-group identifier → list of containing-app or bundle
    /// identifiers granted it. Both name directories or rows, so both must be path-safe.
    static func appGroups(_ node: YAMLNode) throws -> [String: Set<String>] {
        try identifierMapping(node, expected: "app group → identifiers allowed to use it", kind: "app group") { members in
            var allowed = Set<String>()
            for entry in try members.sequence() {
                let identifier = try entry.string()
                if let problem = BundleIdentifierRules.pathSafetyProblem(identifier) {
                    throw entry.error("expected a containing-app or bundle identifier; \"\(identifier)\" \(problem)")
                }
                allowed.insert(identifier)
            }
            return allowed
        }
    }
}
