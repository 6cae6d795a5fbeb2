/// Prints a predicate back in canonical form: upper-case keywords, `==`-style operators,
/// double-quoted strings, parentheses only where precedence needs them. The output parses back
/// to the same tree (`ActivationPredicate.parse(p.description) == p`).
enum Printer {
    static func print(_ p: ActivationPredicate) -> String {
        var out = ""
        write(p, into: &out)
        return out
    }

    /// Binding strength: OR 1, AND 2, NOT and atoms 3.
    private static func precedence(_ p: ActivationPredicate) -> Int {
        switch p {
        case .or: 1
        case .and: 2
        case .not, .constant, .comparison: 3
        }
    }

    private static func write(_ p: ActivationPredicate, into out: inout String) {
        switch p {
        case .constant(let b):
            out += b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let inner):
            out += "NOT "
            child(inner, minimum: 3, into: &out)
        case .and(let l, let r):
            child(l, minimum: 2, into: &out)
            out += " AND "
            // Left-associative: a right operand of equal strength keeps its parentheses.
            child(r, minimum: 3, into: &out)
        case .or(let l, let r):
            child(l, minimum: 1, into: &out)
            out += " OR "
            child(r, minimum: 2, into: &out)
        case .comparison(let c):
            if let a = c.aggregate { out += a.rawValue + " " }
            write(c.lhs, into: &out)
            out += " " + c.op.rawValue + " "
            write(c.rhs, into: &out)
        }
    }

    private static func child(_ p: ActivationPredicate, minimum: Int, into out: inout String) {
        if precedence(p) < minimum {
            out += "("
            write(p, into: &out)
            out += ")"
        } else {
            write(p, into: &out)
        }
    }

    static func write(_ e: RuleExpression, into out: inout String) {
        switch e {
        case .keyPath(let variable, let keys):
            var parts: [String] = []
            if let variable { parts.append("$" + variable) }
            parts += keys
            out += parts.joined(separator: ".")
        case .subquery(let collection, let variable, let predicate):
            out += "SUBQUERY("
            write(collection, into: &out)
            out += ", $" + variable + ", "
            write(predicate, into: &out)
            out += ")"
        case .count(let inner):
            write(inner, into: &out)
            out += ".@count"
        case .string(let s):
            out += quote(s)
        case .number(let n):
            out += number(n)
        case .null:
            out += "NIL"
        }
    }

    static func number(_ n: Double) -> String {
        if n == n.rounded(), abs(n) < 1e15 {
            let i = Int64(n)
            // -0.0 prints as 0, which parses back to 0.0: keep the sign visible.
            if i == 0 && n.sign == .minus { return "-0.0" }
            return String(i)
        }
        return "\(n)"
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\0": out += "\\0"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

extension ActivationPredicate: CustomStringConvertible {
    /// Canonical text; parses back to an equal predicate.
    public var description: String { Printer.print(self) }
}

extension RuleExpression: CustomStringConvertible {
    public var description: String {
        var out = ""
        Printer.write(self, into: &out)
        return out
    }
}
