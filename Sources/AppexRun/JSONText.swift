/// A JSON value written as the full tool's `JSONOutput` writes it (Foundation's
/// `JSONSerialization`, pretty-printed, keys sorted, slashes unescaped), for the output of
/// the Foundation-free `appex run`.
public indirect enum JSONText: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case string(String)
    case array([JSONText])
    case object([String: JSONText])

    public func pretty() -> String {
        var out = ""
        write(into: &out, indent: "")
        return out
    }

    private func write(into out: inout String, indent: String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let n): out += String(n)
        case .string(let s): Self.quote(s, into: &out)
        case .array(let items):
            let inner = indent + "  "
            out += "[\n"
            if items.isEmpty { out += "\n" }
            for (k, item) in items.enumerated() {
                out += inner
                item.write(into: &out, indent: inner)
                out += k == items.count - 1 ? "\n" : ",\n"
            }
            out += indent + "]"
        case .object(let members):
            let inner = indent + "  "
            out += "{\n"
            if members.isEmpty { out += "\n" }
            let keys = members.keys.sorted()
            for (k, key) in keys.enumerated() {
                out += inner
                Self.quote(key, into: &out)
                out += " : "
                members[key]!.write(into: &out, indent: inner)
                out += k == keys.count - 1 ? "\n" : ",\n"
            }
            out += indent + "}"
        }
    }

    private static func quote(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = Array("0123456789abcdef".unicodeScalars)
                    out += "\\u00"
                    out.unicodeScalars.append(hex[Int(scalar.value >> 4)])
                    out.unicodeScalars.append(hex[Int(scalar.value & 0xF)])
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
