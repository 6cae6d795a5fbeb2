import AppexBundle
import Foundation

extension PlistValue {
    /// A JSON-compatible rendering (dates as ISO 8601, data as base64), for `--json` output.
    var jsonObject: Any {
        switch self {
        case .string(let s): s
        case .integer(let i): i
        case .real(let d): d
        case .bool(let b): b
        case .date(let d): d.iso8601
        case .data(let d): Data(d).base64EncodedString()
        case .array(let a): a.map(\.jsonObject)
        case .dictionary(let d): d.mapValues(\.jsonObject)
        }
    }
}
