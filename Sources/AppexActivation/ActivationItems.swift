import Foundation

/// What a host offers an extension: the request's `NSExtensionItem`s, as JSON.
///
///     {"extensionItems": [
///         {"attachments": [{"registeredTypeIdentifiers": ["public.jpeg"], "suggestedName": "photo.jpg"}],
///          "attributedContentText": "Look at this",
///          "attributedTitle": "Holiday"}
///     ]}
///
/// Every key except `extensionItems` and `registeredTypeIdentifiers` is optional; unknown keys
/// are refused so a misspelt key is not silently ignored. Text is carried as plain strings
/// (attributes do not matter for activation).
public struct ActivationItems: Sendable, Hashable, Codable {
    public var extensionItems: [ActivationItem]

    public init(extensionItems: [ActivationItem]) { self.extensionItems = extensionItems }

    /// Limits a payload must respect before any rule looks at it.
    public enum Limits {
        /// Largest JSON document accepted by `decode(json:)`.
        public static let maximumJSONBytes = 1 << 20
        public static let maximumItems = 64
        /// Attachments across all items.
        public static let maximumAttachments = 512
        public static let maximumTypeIdentifiersPerAttachment = 32
        /// Longest type identifier, in UTF-8 bytes.
        public static let maximumTypeIdentifierLength = 255
        /// Longest text value (content text, title, suggested name), in UTF-8 bytes.
        public static let maximumTextLength = 64 * 1024
    }

    /// Total attachments across all items.
    public var attachmentCount: Int { extensionItems.reduce(0) { $0 + $1.attachments.count } }

    /// Decodes and checks a JSON payload; errors name the JSON path (`$.extensionItems[0]…`).
    public static func decode(json data: Data) throws(ItemsError) -> ActivationItems {
        guard data.count <= Limits.maximumJSONBytes else {
            throw ItemsError(path: "$", message: "payload is \(data.count) bytes; the limit is \(Limits.maximumJSONBytes)")
        }
        let items: ActivationItems
        do {
            items = try JSONDecoder().decode(ActivationItems.self, from: data)
        } catch let error as DecodingError {
            throw ItemsError(error)
        } catch {
            throw ItemsError(path: "$", message: "\(error)")
        }
        try items.validate()
        return items
    }

    /// Checks the limits; decoding calls it, hosts building items in code may call it too.
    public func validate() throws(ItemsError) {
        guard extensionItems.count <= Limits.maximumItems else {
            throw ItemsError(path: "$.extensionItems", message: "\(extensionItems.count) items; the limit is \(Limits.maximumItems)")
        }
        guard attachmentCount <= Limits.maximumAttachments else {
            throw ItemsError(path: "$.extensionItems", message: "\(attachmentCount) attachments in all; the limit is \(Limits.maximumAttachments)")
        }
        // Paths are built only on failure: validation runs for every request.
        for (i, item) in extensionItems.enumerated() {
            func ip() -> String { "$.extensionItems[\(i)]" }
            for (key, text) in [("attributedContentText", item.attributedContentText), ("attributedTitle", item.attributedTitle)] {
                if let text, text.utf8.count > Limits.maximumTextLength {
                    throw ItemsError(path: "\(ip()).\(key)", message: "text is \(text.utf8.count) bytes; the limit is \(Limits.maximumTextLength)")
                }
            }
            for (j, a) in item.attachments.enumerated() {
                func ap() -> String { "\(ip()).attachments[\(j)]" }
                guard a.registeredTypeIdentifiers.count <= Limits.maximumTypeIdentifiersPerAttachment else {
                    throw ItemsError(
                        path: "\(ap()).registeredTypeIdentifiers",
                        message: "\(a.registeredTypeIdentifiers.count) identifiers; the limit is \(Limits.maximumTypeIdentifiersPerAttachment)")
                }
                for (k, t) in a.registeredTypeIdentifiers.enumerated() {
                    let length = t.utf8.count
                    guard length > 0, length <= Limits.maximumTypeIdentifierLength else {
                        throw ItemsError(
                            path: "\(ap()).registeredTypeIdentifiers[\(k)]",
                            message: "a type identifier must be 1 to \(Limits.maximumTypeIdentifierLength) bytes")
                    }
                }
                if let n = a.suggestedName, n.utf8.count > Limits.maximumTextLength {
                    throw ItemsError(path: "\(ap()).suggestedName", message: "name is too long")
                }
            }
        }
    }
}

/// One `NSExtensionItem` as an activation rule sees it: its text, title and attachments' types,
/// no data (the wire's `ExtensionItem` is the item itself).
public struct ActivationItem: Sendable, Hashable, Codable {
    public var attachments: [ActivationAttachment]
    /// The item's body text (`attributedContentText`), which `NSExtensionActivationSupportsText` matches.
    public var attributedContentText: String?
    public var attributedTitle: String?

    public init(attachments: [ActivationAttachment] = [], attributedContentText: String? = nil, attributedTitle: String? = nil) {
        self.attachments = attachments
        self.attributedContentText = attributedContentText
        self.attributedTitle = attributedTitle
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case attachments, attributedContentText, attributedTitle
    }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue))
        let c = try decoder.container(keyedBy: CodingKeys.self)
        attachments = try c.decodeIfPresent([ActivationAttachment].self, forKey: .attachments) ?? []
        attributedContentText = try c.decodeIfPresent(String.self, forKey: .attributedContentText)
        attributedTitle = try c.decodeIfPresent(String.self, forKey: .attributedTitle)
    }
}

/// One `NSItemProvider`: the type identifiers it can provide, and optionally its file name.
public struct ActivationAttachment: Sendable, Hashable, Codable {
    public var registeredTypeIdentifiers: [String]
    public var suggestedName: String?

    public init(registeredTypeIdentifiers: [String], suggestedName: String? = nil) {
        self.registeredTypeIdentifiers = registeredTypeIdentifiers
        self.suggestedName = suggestedName
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case registeredTypeIdentifiers, suggestedName
    }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue))
        let c = try decoder.container(keyedBy: CodingKeys.self)
        registeredTypeIdentifiers = try c.decode([String].self, forKey: .registeredTypeIdentifiers)
        suggestedName = try c.decodeIfPresent(String.self, forKey: .suggestedName)
    }
}

extension ActivationItems {
    private enum CodingKeys: String, CodingKey, CaseIterable { case extensionItems }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue))
        let c = try decoder.container(keyedBy: CodingKeys.self)
        extensionItems = try c.decode([ActivationItem].self, forKey: .extensionItems)
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

private func rejectUnknownKeys(_ decoder: any Decoder, allowed: [String]) throws {
    let c = try decoder.container(keyedBy: AnyKey.self)
    for key in c.allKeys where !allowed.contains(key.stringValue) {
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: decoder.codingPath + [key],
                debugDescription: "unknown key \"\(key.stringValue)\"; expected one of: \(allowed.joined(separator: ", "))"))
    }
}

/// A bad items payload: the JSON path and what is wrong there.
public struct ItemsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `$`, `$.extensionItems[0].attachments[1].registeredTypeIdentifiers`, …
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    init(_ error: DecodingError) {
        func render(_ codingPath: [any CodingKey]) -> String {
            var s = "$"
            for k in codingPath {
                if let i = k.intValue { s += "[\(i)]" } else { s += "." + k.stringValue }
            }
            return s
        }
        switch error {
        case .typeMismatch(let type, let ctx):
            self.init(path: render(ctx.codingPath), message: "expected \(Self.jsonName(type))")
        case .valueNotFound(let type, let ctx):
            self.init(path: render(ctx.codingPath), message: "expected \(Self.jsonName(type)), found null")
        case .keyNotFound(let key, let ctx):
            self.init(path: render(ctx.codingPath + [key]), message: "missing required key \"\(key.stringValue)\"")
        case .dataCorrupted(let ctx):
            let detail =
                ctx.codingPath.isEmpty ? "not valid JSON" + (ctx.underlyingError.map { ": \($0.localizedDescription)" } ?? "") : ctx.debugDescription
            self.init(path: render(ctx.codingPath), message: detail)
        @unknown default:
            self.init(path: "$", message: "\(error)")
        }
    }

    private static func jsonName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is [String].Type: "an array of strings"
        case is [Any].Type: "an array"
        default:
            String(describing: type).hasPrefix("Array") ? "an array" : "an object"
        }
    }

    public var description: String { "\(path): \(message)" }
}
