/// A position in a predicate string: UTF-8 byte offset plus 1-based line and column.
public struct RuleLocation: Sendable, Hashable, CustomStringConvertible {
    /// Offset in bytes from the start of the predicate string (UTF-8).
    public var offset: Int
    public var line: Int
    public var column: Int

    public init(offset: Int, line: Int, column: Int) {
        self.offset = offset
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column) (offset \(offset))" }
}

/// A rule that cannot be compiled: where, and what was expected or wrong.
public struct RuleError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// Not a well-formed predicate (`activation.syntax`).
        case syntax
        /// A key path names no property of the value it is applied to (`activation.unknown-key`).
        case unknownKey
        /// `$name` used outside a SUBQUERY that binds it (`activation.unbound-variable`).
        case unboundVariable
        /// Operands of the wrong kind, e.g. a number with UTI-CONFORMS-TO (`activation.type`).
        case type
        /// Over the length or nesting limits (`activation.limit`).
        case limit
    }

    public var kind: Kind
    public var location: RuleLocation
    public var message: String

    public init(_ kind: Kind, at location: RuleLocation, _ message: String) {
        self.kind = kind
        self.location = location
        self.message = message
    }

    /// The stable finding code for this error.
    public var code: String {
        switch kind {
        case .syntax: "activation.syntax"
        case .unknownKey: "activation.unknown-key"
        case .unboundVariable: "activation.unbound-variable"
        case .type: "activation.type"
        case .limit: "activation.limit"
        }
    }

    public var description: String { "\(location.line):\(location.column) (offset \(location.offset)): \(message)" }
}

enum TokenKind: Sendable, Hashable {
    case identifier(String)
    case variable(String)
    case string(String)
    case number(Double)
    case keyword(Keyword)
    case op(ComparisonOperator)
    case and, or, not  // symbolic && || !
    case lparen, rparen, comma, dot
    case at(String)  // @count and other collection operators
    case end
}

/// Reserved words, matched case-insensitively.
enum Keyword: String, Sendable, CaseIterable {
    case and = "AND", or = "OR", not = "NOT"
    case any = "ANY", all = "ALL", none = "NONE", some = "SOME"
    case subquery = "SUBQUERY"
    case truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"
    case utiConformsTo = "UTI-CONFORMS-TO", utiEquals = "UTI-EQUALS"
    case nilLiteral = "NIL", nullLiteral = "NULL"
}

struct Token: Sendable {
    var kind: TokenKind
    var location: RuleLocation
    /// Byte length in the source, for error spans.
    var length: Int
}

/// Splits a predicate into tokens. Works on UTF-8 bytes so offsets are exact and cheap.
struct Lexer {
    private let bytes: [UInt8]
    private var pos = 0
    private var line = 1
    private var lineStart = 0

    init(_ source: String) { bytes = Array(source.utf8) }

    var location: RuleLocation { RuleLocation(offset: pos, line: line, column: pos - lineStart + 1) }

    mutating func tokenize() throws(RuleError) -> [Token] {
        var out: [Token] = []
        while true {
            let t = try next()
            out.append(t)
            if case .end = t.kind { return out }
        }
    }

    private mutating func skipSpace() {
        while pos < bytes.count {
            let b = bytes[pos]
            if b == 0x0A {
                pos += 1
                line += 1
                lineStart = pos
            } else if b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0B || b == 0x0C {
                pos += 1
            } else {
                return
            }
        }
    }

    private func peek(_ k: Int = 0) -> UInt8? { pos + k < bytes.count ? bytes[pos + k] : nil }

    private static func isIdentStart(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b >= 0x80
    }
    private static func isIdentPart(_ b: UInt8) -> Bool { isIdentStart(b) || (b >= 0x30 && b <= 0x39) }
    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    private mutating func next() throws(RuleError) -> Token {
        skipSpace()
        let start = location
        guard let b = peek() else { return Token(kind: .end, location: start, length: 0) }
        func tok(_ k: TokenKind, _ n: Int) -> Token {
            pos += n
            return Token(kind: k, location: start, length: n)
        }
        switch b {
        case UInt8(ascii: "("): return tok(.lparen, 1)
        case UInt8(ascii: ")"): return tok(.rparen, 1)
        case UInt8(ascii: ","): return tok(.comma, 1)
        case UInt8(ascii: "."):
            if let n = peek(1), Self.isDigit(n) { return try number(start) }
            return tok(.dot, 1)
        case UInt8(ascii: "&"):
            if peek(1) == UInt8(ascii: "&") { return tok(.and, 2) }
            throw RuleError(.syntax, at: start, "expected \"&&\", found a single \"&\"")
        case UInt8(ascii: "|"):
            if peek(1) == UInt8(ascii: "|") { return tok(.or, 2) }
            throw RuleError(.syntax, at: start, "expected \"||\", found a single \"|\"")
        case UInt8(ascii: "!"):
            if peek(1) == UInt8(ascii: "=") { return tok(.op(.notEqual), 2) }
            return tok(.not, 1)
        case UInt8(ascii: "="):
            if peek(1) == UInt8(ascii: "=") { return tok(.op(.equal), 2) }
            if peek(1) == UInt8(ascii: "<") { return tok(.op(.lessOrEqual), 2) }
            if peek(1) == UInt8(ascii: ">") { return tok(.op(.greaterOrEqual), 2) }
            return tok(.op(.equal), 1)
        case UInt8(ascii: "<"):
            if peek(1) == UInt8(ascii: "=") { return tok(.op(.lessOrEqual), 2) }
            if peek(1) == UInt8(ascii: ">") { return tok(.op(.notEqual), 2) }
            return tok(.op(.less), 1)
        case UInt8(ascii: ">"):
            if peek(1) == UInt8(ascii: "=") { return tok(.op(.greaterOrEqual), 2) }
            return tok(.op(.greater), 1)
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return try string(start, quote: b)
        case UInt8(ascii: "$"):
            pos += 1
            guard let c = peek(), Self.isIdentStart(c) else {
                throw RuleError(.syntax, at: start, "expected a variable name after \"$\"")
            }
            let name = identifierRun()
            return Token(kind: .variable(name), location: start, length: pos - start.offset)
        case UInt8(ascii: "@"):
            pos += 1
            guard let c = peek(), Self.isIdentStart(c) else {
                throw RuleError(.syntax, at: start, "expected an operator name after \"@\", such as @count")
            }
            let name = identifierRun()
            return Token(kind: .at(name), location: start, length: pos - start.offset)
        case UInt8(ascii: "-"), UInt8(ascii: "+"):
            if let n = peek(1), Self.isDigit(n) || n == UInt8(ascii: ".") { return try number(start) }
            throw RuleError(.syntax, at: start, "unexpected \"\(Character(UnicodeScalar(b)))\"; arithmetic is not supported")
        default:
            if Self.isDigit(b) { return try number(start) }
            if Self.isIdentStart(b) { return word(start) }
            let shown = b < 0x80 && b >= 0x20 ? "\"\(Character(UnicodeScalar(b)))\"" : "byte 0x" + String(b, radix: 16, uppercase: true)
            throw RuleError(.syntax, at: start, "unexpected \(shown)")
        }
    }

    private mutating func identifierRun() -> String {
        let s = pos
        while let c = peek(), Self.isIdentPart(c) { pos += 1 }
        return String(decoding: bytes[s..<pos], as: UTF8.self)
    }

    /// A word: keyword or identifier. `UTI-CONFORMS-TO` and `UTI-EQUALS` contain hyphens, so a
    /// word followed by `-` is checked against those two before the hyphen is left alone.
    private mutating func word(_ start: RuleLocation) -> Token {
        var text = identifierRun()
        for kw in [Keyword.utiConformsTo, .utiEquals] {
            let kb = Array(kw.rawValue.utf8)
            if start.offset + kb.count <= bytes.count,
                zip(bytes[start.offset..<(start.offset + kb.count)], kb).allSatisfy({ Self.upper($0) == $1 }),
                start.offset + kb.count == bytes.count || !Self.isIdentPart(bytes[start.offset + kb.count])
            {
                pos = start.offset + kb.count
                text = kw.rawValue
                return Token(kind: .keyword(kw), location: start, length: kb.count)
            }
        }
        if let kw = Keyword(rawValue: text.uppercased()), kw != .utiConformsTo, kw != .utiEquals {
            return Token(kind: .keyword(kw), location: start, length: pos - start.offset)
        }
        return Token(kind: .identifier(text), location: start, length: pos - start.offset)
    }

    private static func upper(_ b: UInt8) -> UInt8 { b >= 0x61 && b <= 0x7A ? b - 0x20 : b }

    private mutating func number(_ start: RuleLocation) throws(RuleError) -> Token {
        let s = pos
        if peek() == UInt8(ascii: "-") || peek() == UInt8(ascii: "+") { pos += 1 }
        if peek() == UInt8(ascii: "0"), let x = peek(1), x == UInt8(ascii: "x") || x == UInt8(ascii: "X") {
            pos += 2
            let ds = pos
            while let c = peek(), Self.isDigit(c) || (Self.upper(c) >= 0x41 && Self.upper(c) <= 0x46) { pos += 1 }
            let digits = String(decoding: bytes[ds..<pos], as: UTF8.self)
            guard !digits.isEmpty, digits.count <= 15, let v = Int64(digits, radix: 16) else {
                throw RuleError(.syntax, at: start, "expected hexadecimal digits after 0x (at most 15)")
            }
            let negative = bytes[s] == UInt8(ascii: "-")
            return Token(kind: .number(Double(negative ? -v : v)), location: start, length: pos - s)
        }
        while let c = peek(), Self.isDigit(c) { pos += 1 }
        if peek() == UInt8(ascii: "."), let n = peek(1), Self.isDigit(n) {
            pos += 1
            while let c = peek(), Self.isDigit(c) { pos += 1 }
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            var k = 1
            if let sign = peek(1), sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { k = 2 }
            if let d = peek(k), Self.isDigit(d) {
                pos += k
                while let c = peek(), Self.isDigit(c) { pos += 1 }
            }
        }
        let text = String(decoding: bytes[s..<pos], as: UTF8.self)
        guard let v = Double(text), v.isFinite else {
            throw RuleError(.syntax, at: start, "malformed number \"\(text)\"")
        }
        if let c = peek(), Self.isIdentStart(c) {
            throw RuleError(.syntax, at: location, "expected an operator or \")\" after the number \(text)")
        }
        return Token(kind: .number(v), location: start, length: pos - s)
    }

    /// A quoted string with NSPredicate's escapes: \" \' \\ \n \t \r \0 \xHH \uHHHH.
    private mutating func string(_ start: RuleLocation, quote: UInt8) throws(RuleError) -> Token {
        pos += 1
        var out: [UInt8] = []
        while true {
            guard let c = peek() else {
                throw RuleError(.syntax, at: start, "unterminated string: expected a closing \(quote == 0x22 ? "\"" : "'")")
            }
            if c == quote {
                pos += 1
                break
            }
            if c == 0x0A {
                line += 1
                lineStart = pos + 1
            }
            if c == UInt8(ascii: "\\") {
                let escAt = location
                guard let e = peek(1) else {
                    throw RuleError(.syntax, at: escAt, "unterminated escape at end of input")
                }
                pos += 2
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "0"): out.append(0x00)
                case UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "'"): out.append(e)
                case UInt8(ascii: "x"), UInt8(ascii: "u"):
                    let n = e == UInt8(ascii: "x") ? 2 : 4
                    var v: UInt32 = 0
                    for _ in 0..<n {
                        guard let h = peek(), let d = Self.hexValue(h) else {
                            throw RuleError(.syntax, at: escAt, "expected \(n) hexadecimal digits after \\\(Character(UnicodeScalar(e)))")
                        }
                        v = v * 16 + d
                        pos += 1
                    }
                    guard let scalar = UnicodeScalar(v) else {
                        throw RuleError(.syntax, at: escAt, "\\u\(String(v, radix: 16)) is not a Unicode scalar")
                    }
                    out.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    throw RuleError(
                        .syntax, at: escAt,
                        "unknown escape \"\\\(Character(UnicodeScalar(e)))\"; expected one of \\\" \\' \\\\ \\n \\t \\r \\0 \\x \\u")
                }
                continue
            }
            out.append(c)
            pos += 1
        }
        return Token(kind: .string(String(decoding: out, as: UTF8.self)), location: start, length: pos - start.offset)
    }

    private static func hexValue(_ b: UInt8) -> UInt32? {
        switch b {
        case 0x30...0x39: UInt32(b - 0x30)
        case 0x41...0x46: UInt32(b - 0x41 + 10)
        case 0x61...0x66: UInt32(b - 0x61 + 10)
        default: nil
        }
    }
}
