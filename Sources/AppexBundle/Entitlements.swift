/// An extension's entitlements: what it asks for. Its policy decides what it gets.
public struct Entitlements: Sendable, Equatable {
    public static let applicationGroupsKey = "com.apple.security.application-groups"
    public static let networkClientKey = "com.apple.security.network.client"
    public static let networkServerKey = "com.apple.security.network.server"

    /// Every entitlement as written; keys Appex does not act on are kept for `info --json`.
    public var raw: [String: PlistValue]
    public var applicationGroups: [String]
    public var readFindings: [Finding]

    public init(_ dict: [String: PlistValue] = [:]) {
        var reader = TypedReader()
        raw = dict
        applicationGroups = reader.stringArray(Self.applicationGroupsKey, in: dict, at: .root) ?? []
        readFindings = reader.findings
    }

    public static func load(path: String, buildSettings: [String: String] = [:]) throws -> Entitlements {
        Entitlements(try PropertyListFile.readDictionary(at: path, buildSettings: buildSettings))
    }

    /// Boolean entitlements set to true (network client, server, …), sorted.
    public var grantedFlags: [String] {
        raw.compactMap { key, value in value.boolValue == true ? key : nil }.sorted()
    }

    /// The entitlement keys requested: boolean ones set to true, and non-empty others.
    public var requestedKeys: [String] {
        raw.compactMap { key, value -> String? in
            switch value {
            case .bool(let b): b ? key : nil
            case .array(let a): a.isEmpty ? nil : key
            default: key
            }
        }.sorted()
    }

    /// Findings a validator reports about the entitlements themselves.
    public func validate(at file: String? = nil) -> [Finding] {
        var out = readFindings
        for (index, group) in applicationGroups.enumerated() {
            let path = PlistKeyPath([Self.applicationGroupsKey, String(index)])
            let vars = BuildVariables.references(in: group)
            if !vars.isEmpty {
                out.append(
                    .error(
                        "entitlements.build-variable", at: path,
                        "unresolved build variable \(vars.map { "$(\($0))" }.joined(separator: ", ")) in app group \"\(group)\"; pass --define NAME=VALUE as Xcode would"
                    ))
            } else if let problem = BundleIdentifierRules.pathSafetyProblem(group) {
                out.append(.error("entitlements.group-unsafe", at: path, "app group \"\(group)\" \(problem); it names a directory"))
            } else if !group.hasPrefix("group.") {
                // macOS uses a team-ID prefix instead of `group.`; both are accepted.
                out.append(
                    .warning(
                        "entitlements.group-prefix", at: path,
                        "app group \"\(group)\" does not start with \"group.\" (iOS form); read as a macOS team-prefixed group"))
            }
        }
        return out
    }
}
