import AppexPolicy

extension ConfigurationValues {
    /// `apps:`, a mapping of containing-app identifier → uids or user names that may act as
    /// that app's host.
    static func apps(_ node: YAMLNode) throws -> [String: Set<UInt32>] {
        try identifierMapping(
            node, expected: "containing-app identifier → uids or user names that speak for it", kind: "containing app",
            value: uids)
    }
}
