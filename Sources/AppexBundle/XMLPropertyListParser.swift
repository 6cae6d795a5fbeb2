/// The XML property-list format (`<plist version="1.0"><dict>…`), UTF-8, as CoreFoundation
/// reads it: a prolog of `<?xml?>`, comments and a DOCTYPE; the five element kinds of values;
/// the predefined and numeric character entities; CDATA. Errors name the line.
struct XMLPropertyListParser {
    private let b: [UInt8]
    private var i: Int
    private var depth = 0
    private var budget: PropertyListBudget

    init(_ bytes: [UInt8], from start: Int = 0, budget: PropertyListBudget = PropertyListBudget()) {
        b = bytes
        i = start
        self.budget = budget
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    mutating func parse() throws(PropertyListSyntaxError) -> PlistValue {
        try skipMarkup(allowDoctype: true)
        let tag = try startTag()
        let value: PlistValue
        if tag.name == "plist" {
            guard !tag.empty else { throw fault("<plist> holds no value") }
            try skipMarkup()
            if lookingAt("</") { throw fault("<plist> holds no value") }
            value = try self.value(try startTag())
            try skipMarkup()
            try endTag("plist")
        } else {
            value = try self.value(tag)
        }
        try skipMarkup()
        guard i == b.count else { throw fault("unexpected content after the property list") }
        return value
    }

    // MARK: Values

    private mutating func value(_ tag: (name: String, empty: Bool)) throws(PropertyListSyntaxError) -> PlistValue {
        let start = i
        if let refusal = budget.chargeValue() { throw fault(refusal, at: start) }
        switch tag.name {
        case "dict":
            return try dictionary(empty: tag.empty)
        case "array":
            return try array(empty: tag.empty)
        case "string":
            let text = tag.empty ? "" : try text(closing: "string")
            if let refusal = budget.chargeBytes(text.utf8.count) { throw fault(refusal, at: start) }
            return .string(text)
        case "integer":
            let t = tag.empty ? "" : try text(closing: "integer")
            guard let n = Self.integer(t) else { throw fault("<integer> \"\(t)\" is not an integer in range") }
            return .integer(n)
        case "real":
            let t = tag.empty ? "" : try text(closing: "real")
            guard let d = Self.real(t) else { throw fault("<real> \"\(t)\" is not a number") }
            return .real(d)
        case "true", "false":
            if !tag.empty {
                guard lookingAt("</") else { throw fault("<\(tag.name)> holds content; it is written <\(tag.name)/>") }
                try endTag(tag.name)
            }
            return .bool(tag.name == "true")
        case "date":
            let t = tag.empty ? "" : try text(closing: "date")
            guard let d = PlistDate(iso8601: Substring(t)) else {
                throw fault("<date> \"\(t)\" is not YYYY-MM-DDTHH:MM:SSZ")
            }
            return .date(d)
        case "data":
            let t = tag.empty ? "" : try text(closing: "data")
            guard let bytes = Base64.decode(t) else { throw fault("<data> is not base64") }
            if let refusal = budget.chargeBytes(bytes.count) { throw fault(refusal, at: start) }
            return .data(bytes)
        case "key":
            throw fault("<key> outside a <dict>")
        default:
            throw fault("unknown element <\(tag.name)>")
        }
    }

    private mutating func dictionary(empty: Bool) throws(PropertyListSyntaxError) -> PlistValue {
        if empty { return .dictionary([:]) }
        try enter()
        defer { depth -= 1 }
        var out: [String: PlistValue] = [:]
        while true {
            try skipMarkup()
            if lookingAt("</") {
                try endTag("dict")
                return .dictionary(out)
            }
            let keyTag = try startTag()
            guard keyTag.name == "key" else { throw fault("<\(keyTag.name)> where a <dict> expects a <key>") }
            let keyStart = i
            if let refusal = budget.chargeValue() { throw fault(refusal, at: keyStart) }
            let key = keyTag.empty ? "" : try text(closing: "key")
            if let refusal = budget.chargeBytes(key.utf8.count) { throw fault(refusal, at: keyStart) }
            try skipMarkup()
            if lookingAt("</") || i >= b.count { throw fault("key \"\(key)\" has no value") }
            let valueTag = try startTag()
            if valueTag.name == "key" { throw fault("key \"\(key)\" has no value") }
            out[key] = try value(valueTag)
        }
    }

    private mutating func array(empty: Bool) throws(PropertyListSyntaxError) -> PlistValue {
        if empty { return .array([]) }
        try enter()
        defer { depth -= 1 }
        var out: [PlistValue] = []
        while true {
            try skipMarkup()
            if lookingAt("</") {
                try endTag("array")
                return .array(out)
            }
            out.append(try value(try startTag()))
        }
    }

    private mutating func enter() throws(PropertyListSyntaxError) {
        depth += 1
        if depth > PropertyListReader.maximumDepth {
            throw fault("nested deeper than \(PropertyListReader.maximumDepth) levels")
        }
    }

    // MARK: Markup

    /// Skips white space, comments and processing instructions (and, in the prolog, a DOCTYPE).
    private mutating func skipMarkup(allowDoctype: Bool = false) throws(PropertyListSyntaxError) {
        while i < b.count {
            if Self.isSpace(b[i]) {
                i += 1
            } else if lookingAt("<!--") {
                try skip(past: "-->", what: "comment")
            } else if lookingAt("<?") {
                try skip(past: "?>", what: "processing instruction")
            } else if allowDoctype, lookingAt("<!DOCTYPE") {
                try skipDoctype()
            } else {
                return
            }
        }
    }

    private mutating func skipDoctype() throws(PropertyListSyntaxError) {
        let start = i
        guard skipToTagEnd(inDoctype: true) else { throw fault("unterminated <!DOCTYPE", at: start) }
    }

    /// Moves past the `>` that ends the current tag, skipping quoted attribute values (and in
    /// a DOCTYPE, its `[…]` internal subset). False at the end of the file, or at a `<`
    /// inside a tag.
    private mutating func skipToTagEnd(inDoctype: Bool) -> Bool {
        var brackets = 0
        var quote: UInt8 = 0
        while i < b.count {
            let c = b[i]
            i += 1
            if quote != 0 {
                if c == quote { quote = 0 }
            } else if c == 0x22 || c == 0x27 {
                quote = c
            } else if inDoctype, c == UInt8(ascii: "[") {
                brackets += 1
            } else if inDoctype, c == UInt8(ascii: "]") {
                brackets -= 1
            } else if c == UInt8(ascii: ">"), brackets <= 0 {
                return true
            } else if !inDoctype, c == UInt8(ascii: "<") {
                return false
            }
        }
        return false
    }

    /// `<name attr="…">` or `<name/>`; attributes are read past, not kept (`version` is all a plist has).
    private mutating func startTag() throws(PropertyListSyntaxError) -> (name: String, empty: Bool) {
        let start = i
        guard i < b.count else { throw fault("the property list ends where a value was expected") }
        guard b[i] == UInt8(ascii: "<"), i + 1 < b.count, b[i + 1] != UInt8(ascii: "/"),
            b[i + 1] != UInt8(ascii: "!")
        else {
            if lookingAt("<![CDATA[") { throw fault("character data where an element was expected") }
            throw fault("text where an element was expected")
        }
        i += 1
        let nameStart = i
        while i < b.count, Self.isNameByte(b[i]) { i += 1 }
        guard i > nameStart else { throw fault("malformed tag", at: start) }
        let name = String(decoding: b[nameStart..<i], as: UTF8.self)
        guard skipToTagEnd(inDoctype: false) else { throw fault("unterminated tag <\(name)", at: start) }
        return (name, b[i - 2] == UInt8(ascii: "/"))
    }

    private mutating func endTag(_ name: String) throws(PropertyListSyntaxError) {
        let start = i
        guard lookingAt("</") else {
            throw fault(i >= b.count ? "the property list ends inside <\(name)>" : "expected </\(name)>")
        }
        i += 2
        let nameStart = i
        while i < b.count, Self.isNameByte(b[i]) { i += 1 }
        let found = String(decoding: b[nameStart..<i], as: UTF8.self)
        while i < b.count, Self.isSpace(b[i]) { i += 1 }
        guard i < b.count, b[i] == UInt8(ascii: ">"), found == name else {
            throw fault("</\(found)> where </\(name)> was expected", at: start)
        }
        i += 1
    }

    /// An element's character content up to `</name>`: entities replaced, CDATA kept
    /// verbatim, comments dropped; any other markup inside is an error.
    private mutating func text(closing name: String) throws(PropertyListSyntaxError) -> String {
        let start = i
        var out: [UInt8] = []
        while true {
            guard i < b.count else { throw fault("<\(name)> is not closed", at: start) }
            let c = b[i]
            if c == UInt8(ascii: "<") {
                if lookingAt("</") {
                    try endTag(name)
                    break
                } else if lookingAt("<![CDATA[") {
                    let from = i + 9
                    try skip(past: "]]>", what: "CDATA section")
                    out += b[from..<(i - 3)]
                } else {
                    // Comments too: CoreFoundation refuses them inside text.
                    throw fault("<\(name)> holds markup; it holds text only")
                }
            } else if c == UInt8(ascii: "&") {
                try entity(into: &out)
            } else {
                out.append(c)
                i += 1
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else {
            throw fault("<\(name)> is not valid UTF-8", at: start)
        }
        return s
    }

    private mutating func entity(into out: inout [UInt8]) throws(PropertyListSyntaxError) {
        let start = i
        var end = i + 1
        while end < b.count, end - i <= 12, b[end] != UInt8(ascii: ";") { end += 1 }
        guard end < b.count, b[end] == UInt8(ascii: ";") else { throw fault("an '&' that starts no entity (write &amp;)") }
        let name = String(decoding: b[(i + 1)..<end], as: UTF8.self)
        i = end + 1
        switch name {
        case "amp": out.append(UInt8(ascii: "&"))
        case "lt": out.append(UInt8(ascii: "<"))
        case "gt": out.append(UInt8(ascii: ">"))
        case "quot": out.append(0x22)
        case "apos": out.append(0x27)
        default:
            var scalar: Unicode.Scalar?
            if name.hasPrefix("#x") || name.hasPrefix("#X") {
                scalar = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
            } else if name.hasPrefix("#") {
                scalar = UInt32(name.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init)
            }
            guard let scalar, scalar.value != 0 else { throw fault("unknown entity &\(name);", at: start) }
            out += Array(String(Character(scalar)).utf8)
        }
    }

    private mutating func skip(past terminator: String, what: String) throws(PropertyListSyntaxError) {
        let start = i
        let t = Array(terminator.utf8)
        i += 2
        while i + t.count <= b.count {
            if b[i] == t[0], Array(b[i..<(i + t.count)]) == t {
                i += t.count
                return
            }
            i += 1
        }
        throw fault("unterminated \(what)", at: start)
    }

    private func lookingAt(_ s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        guard i + n <= b.count else { return false }
        let p = s.utf8Start
        for k in 0..<n where b[i + k] != p[k] { return false }
        return true
    }

    private static func isNameByte(_ c: UInt8) -> Bool {
        (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39)
            || c == UInt8(ascii: "_") || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: ":")
    }

    // MARK: Scalars

    /// White space before a number is allowed, after it is not (as CoreFoundation reads them).
    static func leadingSpaceDropped(_ s: String) -> Substring {
        let u = s.utf8
        guard let first = u.firstIndex(where: { !isSpace($0) }) else { return s[s.endIndex...] }
        return s[first...]
    }

    /// Decimal or `0x` hexadecimal with an optional sign, in the signed 64-bit range.
    static func integer(_ text: String) -> Int64? {
        var t = leadingSpaceDropped(text)
        var negative = false
        if t.first == "-" {
            negative = true
            t = t.dropFirst()
        } else if t.first == "+" {
            t = t.dropFirst()
        }
        var radix = 10
        if t.hasPrefix("0x") || t.hasPrefix("0X") {
            radix = 16
            t = t.dropFirst(2)
        }
        guard !t.isEmpty, let magnitude = UInt64(t, radix: radix) else { return nil }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        return Int64(exactly: magnitude)
    }

    /// Decimal with an optional exponent, or nan/inf/infinity in any case; no hexadecimal.
    static func real(_ text: String) -> Double? {
        let t = leadingSpaceDropped(text)
        switch t.lowercased() {
        case "nan": return .nan
        case "inf", "+inf", "infinity", "+infinity": return .infinity
        case "-inf", "-infinity": return -.infinity
        default:
            let allowed = t.utf8.allSatisfy {
                ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
                    || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E")
            }
            return allowed && !t.isEmpty ? Double(t) : nil
        }
    }

    // MARK: Errors

    private func fault(_ message: String, at offset: Int? = nil) -> PropertyListSyntaxError {
        .atLine(of: offset ?? i, in: b, message)
    }
}
