import AppexBundle
import AppexPolicy

extension ConfigurationValues {
    /// `apps:`, a mapping of containing-app identifier → uids or user names that may act as
    /// that app's host.
    static func apps(_ node: YAMLNode) throws -> [String: Set<UInt32>] {
        guard let mapping = node.node.mapping else {
            throw node.error("expected a mapping of containing-app identifier → uids or user names that speak for it")
        }
        let names = Set(mapping.compactMap { $0.key.scalar?.string })
        var apps: [String: Set<UInt32>] = [:]
        for (app, uids) in try node.mapping(allowed: names) {
            if let problem = BundleIdentifierRules.pathSafetyProblem(app) {
                throw uids.error("containing app \"\(app)\" \(problem)")
            }
            apps[app] = try Self.uids(uids)
        }
        return apps
    }
}
