/// A location inside a property list, written the way PlistBuddy writes it:
/// `NSExtension:NSExtensionAttributes:NSExtensionActivationRule`, array elements as `:0`.
///
/// Colons, not dots, because real keys contain dots (`com.apple.security.application-groups`).
public struct PlistKeyPath: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var components: [String]

    public init(_ components: [String]) { self.components = components }
    public init(stringLiteral value: String) {
        self.components = value.isEmpty ? [] : value.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
    }

    public static let root = PlistKeyPath([])

    public func appending(_ key: String) -> PlistKeyPath { PlistKeyPath(components + [key]) }
    public func appending(index: Int) -> PlistKeyPath { PlistKeyPath(components + [String(index)]) }

    public var description: String { components.isEmpty ? "(root)" : components.joined(separator: ":") }
}
