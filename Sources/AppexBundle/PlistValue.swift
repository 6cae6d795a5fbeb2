/// A property-list value with its type kept exactly as written.
///
/// Validation needs to know what the file said (`<string>1</string>` is not
/// `<integer>1</integer>`), so the reader (`PropertyListReader`) builds this enum directly,
/// with no untyped step between (Foundation's `Any`, where an integer also casts to `Bool`).
public enum PlistValue: Sendable, Equatable, Hashable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case date(PlistDate)
    case data([UInt8])
    case array([PlistValue])
    case dictionary([String: PlistValue])

    /// The plist element name, used in messages ("expected integer, found string").
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .bool: "boolean"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var integerValue: Int64? { if case .integer(let i) = self { i } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var arrayValue: [PlistValue]? { if case .array(let a) = self { a } else { nil } }
    public var dictionaryValue: [String: PlistValue]? { if case .dictionary(let d) = self { d } else { nil } }

    public subscript(key: String) -> PlistValue? { dictionaryValue?[key] }
}
