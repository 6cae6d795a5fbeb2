import AppexBundle
import AppexPolicy

extension ConfigurationValues {
    /// `appGroups:`, a mapping of app-group identifier → list of containing-app or bundle
    /// identifiers granted it. Both name directories or rows, so both must be path-safe.
    static func appGroups(_ node: YAMLNode) throws -> [String: Set<String>] {
        guard let mapping = node.node.mapping else {
            throw node.error("expected a mapping of app group → identifiers allowed to use it")
        }
        // Any group may be named; the walker still refuses duplicates and non-string keys.
        let names = Set(mapping.compactMap { $0.key.scalar?.string })
        var groups: [String: Set<String>] = [:]
        for (group, members) in try node.mapping(allowed: names) {
            if let problem = BundleIdentifierRules.pathSafetyProblem(group) {
                throw members.error("app group \"\(group)\" \(problem)")
            }
            var allowed = Set<String>()
            for entry in try members.sequence() {
                let identifier = try entry.string()
                if let problem = BundleIdentifierRules.pathSafetyProblem(identifier) {
                    throw entry.error("expected a containing-app or bundle identifier; \"\(identifier)\" \(problem)")
                }
                allowed.insert(identifier)
            }
            groups[group] = allowed
        }
        return groups
    }
}
