/// The shape of the evaluation input that key paths may name, checked when a rule compiles so
/// that a misspelt key is an error at load time instead of a rule that is silently false.
///
/// The root (`SELF`) is the request; it has `extensionItems`. An item has `attachments`,
/// `attributedContentText` and `attributedTitle`; an attachment has `registeredTypeIdentifiers`
/// and `suggestedName`.
enum ObjectKind: String, Sendable, Hashable {
    case request, item, attachment
}

enum ElementType: Sendable, Hashable {
    case string
    case object(ObjectKind)
}

enum ValueType: Sendable, Hashable {
    case number
    case string
    case null
    case object(ObjectKind)
    /// `flattened`: the path went through an earlier collection (`extensionItems.attachments`).
    case collection(ElementType, flattened: Bool)

    var name: String {
        switch self {
        case .number: "a number"
        case .string: "a string"
        case .null: "nil"
        case .object(let k): "an \(k.rawValue) object"
        case .collection(.string, _): "a collection of strings"
        case .collection(.object(let k), _): "a collection of \(k.rawValue) objects"
        }
    }
}

/// One key-path component after checking.
enum Step: Sendable, Hashable {
    case extensionItems, attachments, registeredTypeIdentifiers
    case attributedContentText, attributedTitle, suggestedName
}

enum Schema {
    /// The property `key` of an object of kind `kind`: its step and type.
    static func property(_ key: String, of kind: ObjectKind) -> (Step, ValueType)? {
        switch (kind, key) {
        case (.request, "extensionItems"): (.extensionItems, .collection(.object(.item), flattened: false))
        case (.item, "attachments"): (.attachments, .collection(.object(.attachment), flattened: false))
        case (.item, "attributedContentText"): (.attributedContentText, .string)
        case (.item, "attributedTitle"): (.attributedTitle, .string)
        case (.attachment, "registeredTypeIdentifiers"): (.registeredTypeIdentifiers, .collection(.string, flattened: false))
        case (.attachment, "suggestedName"): (.suggestedName, .string)
        default: nil
        }
    }

    static func keys(of kind: ObjectKind) -> [String] {
        switch kind {
        case .request: ["extensionItems"]
        case .item: ["attachments", "attributedContentText", "attributedTitle"]
        case .attachment: ["registeredTypeIdentifiers", "suggestedName"]
        }
    }
}
