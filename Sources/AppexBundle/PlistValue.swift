import Foundation

/// A property-list value with its type kept exactly as written.
///
/// Foundation hands back `Any`, where on Linux an `<integer>` is an `NSNumber` that also casts
/// to `Bool`. Validation needs to know what the file said (`<string>1</string>` is not
/// `<integer>1</integer>`), so every value is converted once, here, into this enum.
public enum PlistValue: Sendable, Equatable, Hashable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
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

extension PlistValue {
    /// Converts Foundation's untyped result. Returns nil for a type a plist cannot hold.
    public init?(foundation value: Any) {
        switch value {
        case let b as Bool where type(of: value) == Bool.self:
            self = .bool(b)
        case let s as String:
            self = .string(s)
        case let n as NSNumber:
            // `<true/>` may also arrive as an NSNumber of Bool type on some Foundations.
            let kind = String(cString: n.objCType)
            if kind == "c" || kind == "B" {
                self = .bool(n.boolValue)
            } else if kind == "d" || kind == "f" {
                self = .real(n.doubleValue)
            } else {
                self = .integer(n.int64Value)
            }
        case let i as Int:
            self = .integer(Int64(i))
        case let d as Double:
            self = .real(d)
        case let d as Date:
            self = .date(d)
        case let d as Data:
            self = .data(d)
        case let a as [Any]:
            var out: [PlistValue] = []
            out.reserveCapacity(a.count)
            for element in a {
                guard let v = PlistValue(foundation: element) else { return nil }
                out.append(v)
            }
            self = .array(out)
        case let d as [String: Any]:
            var out: [String: PlistValue] = [:]
            for (k, element) in d {
                guard let v = PlistValue(foundation: element) else { return nil }
                out[k] = v
            }
            self = .dictionary(out)
        default:
            return nil
        }
    }

    /// A JSON-compatible rendering (dates as ISO 8601, data as base64), for `--json` output.
    public var jsonObject: Any {
        switch self {
        case .string(let s): s
        case .integer(let i): i
        case .real(let d): d
        case .bool(let b): b
        case .date(let d): ISO8601DateFormatter().string(from: d)
        case .data(let d): d.base64EncodedString()
        case .array(let a): a.map(\.jsonObject)
        case .dictionary(let d): d.mapValues(\.jsonObject)
        }
    }
}
