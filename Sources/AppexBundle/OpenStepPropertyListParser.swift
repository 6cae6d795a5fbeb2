/// The OpenStep text format CoreFoundation still reads: `{ key = value; }`, `( a, b )`,
/// quoted or bare strings, `<0fbd 7799>` data, `//` and `/* */` comments; at the top level
/// also the `.strings` form, `key = value;` pairs with no braces. Every value is a string,
/// array, dictionary or data: the format has no numbers, booleans or dates.
struct OpenStepPropertyListParser {
    private let b: [UInt8]
    private var i: Int
    private var depth = 0
    private var budget: PropertyListBudget

    init(_ bytes: [UInt8], from start: Int = 0, budget: PropertyListBudget = PropertyListBudget()) {
        b = bytes
        i = start
        self.budget = budget
    }

    mutating func parse() throws(PropertyListSyntaxError) -> PlistValue {
        try skipSpace()
        // Only white space and comments: an empty `.strings` file, so an empty dictionary
        // (an empty file is an error, as in CoreFoundation).
        guard i < b.count else {
            if b.isEmpty { throw fault("empty file: no property list") }
            return .dictionary([:])
        }
        let start = i
        let value = try self.value()
        try skipSpace()
        if i < b.count, case .string = value, b[i] == UInt8(ascii: "=") {
            // A `.strings` file: a dictionary without its braces.
            i = start
            return try dictionaryBody(closing: nil)
        }
        guard i == b.count else { throw fault("unexpected content after the property list") }
        return value
    }

    private mutating func value() throws(PropertyListSyntaxError) -> PlistValue {
        try skipSpace()
        guard i < b.count else { throw fault("the property list ends where a value was expected") }
        let start = i
        if let refusal = budget.chargeValue() { throw fault(refusal, at: start) }
        switch b[i] {
        case UInt8(ascii: "{"):
            i += 1
            try enter()
            defer { depth -= 1 }
            return try dictionaryBody(closing: UInt8(ascii: "}"))
        case UInt8(ascii: "("):
            i += 1
            try enter()
            defer { depth -= 1 }
            var out: [PlistValue] = []
            try skipSpace()
            if i < b.count, b[i] == UInt8(ascii: ")") {
                i += 1
                return .array(out)
            }
            while true {
                out.append(try value())
                try skipSpace()
                guard i < b.count else { throw fault("array is not closed with ')'") }
                if b[i] == UInt8(ascii: ")") {
                    i += 1
                    return .array(out)
                }
                guard b[i] == UInt8(ascii: ",") else { throw fault("expected ',' or ')' in an array") }
                i += 1
                try skipSpace()
                if i < b.count, b[i] == UInt8(ascii: ")") {
                    i += 1
                    return .array(out)
                }
            }
        case UInt8(ascii: "<"):
            let bytes = try data()
            if let refusal = budget.chargeBytes(bytes.count) { throw fault(refusal, at: start) }
            return .data(bytes)
        case 0x22, 0x27:
            let s = try quoted()
            if let refusal = budget.chargeBytes(s.utf8.count) { throw fault(refusal, at: start) }
            return .string(s)
        default:
            while i < b.count, Self.isBare(b[i]) { i += 1 }
            guard i > start else { throw fault("unexpected character '\(Character(Unicode.Scalar(b[i])))'") }
            if let refusal = budget.chargeBytes(i - start) { throw fault(refusal, at: start) }
            return .string(String(decoding: b[start..<i], as: UTF8.self))
        }
    }

    /// `key = value;` pairs up to `closing` (nil: the end of the file).
    private mutating func dictionaryBody(closing: UInt8?) throws(PropertyListSyntaxError) -> PlistValue {
        var out: [String: PlistValue] = [:]
        while true {
            try skipSpace()
            if let closing, i < b.count, b[i] == closing {
                i += 1
                return .dictionary(out)
            }
            if closing == nil, i == b.count { return .dictionary(out) }
            guard i < b.count else { throw fault("dictionary is not closed with '}'") }
            guard case .string(let key) = try value() else { throw fault("a dictionary key must be a string") }
            try skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: "=") else { throw fault("expected '=' after key \"\(key)\"") }
            i += 1
            out[key] = try value()
            try skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: ";") else { throw fault("expected ';' after the value of \"\(key)\"") }
            i += 1
        }
    }

    private mutating func quoted() throws(PropertyListSyntaxError) -> String {
        let start = i
        let quote = b[i]
        i += 1
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush(_ run: inout [UInt8]) throws(PropertyListSyntaxError) {
            guard !run.isEmpty else { return }
            guard let s = String(validating: run, as: UTF8.self) else { throw fault("string is not valid UTF-8", at: start) }
            scalars.append(contentsOf: s.unicodeScalars)
            run.removeAll()
        }
        while true {
            guard i < b.count else { throw fault("string is not closed", at: start) }
            let c = b[i]
            i += 1
            if c == quote { break }
            guard c == UInt8(ascii: "\\") else {
                run.append(c)
                continue
            }
            guard i < b.count else { throw fault("string is not closed", at: start) }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "n"): run.append(0x0A)
            case UInt8(ascii: "t"): run.append(0x09)
            case UInt8(ascii: "r"): run.append(0x0D)
            case UInt8(ascii: "a"): run.append(0x07)
            case UInt8(ascii: "b"): run.append(0x08)
            case UInt8(ascii: "f"): run.append(0x0C)
            case UInt8(ascii: "v"): run.append(0x0B)
            case UInt8(ascii: "U"), UInt8(ascii: "u"):
                var v: UInt32 = 0
                var digits = 0
                while digits < 4, i < b.count, let d = Self.hex(b[i]) {
                    v = v << 4 | UInt32(d)
                    i += 1
                    digits += 1
                }
                guard digits > 0, let s = Unicode.Scalar(v) else { throw fault("bad \\U escape") }
                try flush(&run)
                scalars.append(s)
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var v = UInt32(e - UInt8(ascii: "0"))
                var digits = 1
                while digits < 3, i < b.count, b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "7") {
                    v = v * 8 + UInt32(b[i] - UInt8(ascii: "0"))
                    i += 1
                    digits += 1
                }
                try flush(&run)
                scalars.append(Unicode.Scalar(UInt8(truncatingIfNeeded: v)))
            default:
                run.append(e)
            }
        }
        try flush(&run)
        return String(scalars)
    }

    private mutating func data() throws(PropertyListSyntaxError) -> [UInt8] {
        let start = i
        i += 1
        var out: [UInt8] = []
        var high: UInt8?
        while true {
            try skipSpace()
            guard i < b.count else { throw fault("data is not closed with '>'", at: start) }
            let c = b[i]
            i += 1
            if c == UInt8(ascii: ">") { break }
            guard let d = Self.hex(c) else { throw fault("data holds '\(Character(Unicode.Scalar(c)))', not a hex digit") }
            if let h = high {
                out.append(h << 4 | d)
                high = nil
            } else {
                high = d
            }
        }
        guard high == nil else { throw fault("data has an odd number of hex digits", at: start) }
        return out
    }

    private mutating func skipSpace() throws(PropertyListSyntaxError) {
        while i < b.count {
            let c = b[i]
            if XMLPropertyListParser.isSpace(c) {
                i += 1
            } else if c == UInt8(ascii: "/"), i + 1 < b.count, b[i + 1] == UInt8(ascii: "/") {
                while i < b.count, b[i] != 0x0A { i += 1 }
            } else if c == UInt8(ascii: "/"), i + 1 < b.count, b[i + 1] == UInt8(ascii: "*") {
                let start = i
                i += 2
                while i + 1 < b.count, !(b[i] == UInt8(ascii: "*") && b[i + 1] == UInt8(ascii: "/")) { i += 1 }
                guard i + 1 < b.count else { throw fault("comment is not closed", at: start) }
                i += 2
            } else {
                return
            }
        }
    }

    private mutating func enter() throws(PropertyListSyntaxError) {
        depth += 1
        if depth > PropertyListReader.maximumDepth { throw fault("nested deeper than \(PropertyListReader.maximumDepth) levels") }
    }

    private static func isBare(_ c: UInt8) -> Bool {
        (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39)
            || c == UInt8(ascii: "_") || c == UInt8(ascii: "$") || c == UInt8(ascii: "+") || c == UInt8(ascii: "/")
            || c == UInt8(ascii: ":") || c == UInt8(ascii: ".") || c == UInt8(ascii: "-")
    }

    private static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private func fault(_ message: String, at offset: Int? = nil) -> PropertyListSyntaxError {
        .atLine(of: offset ?? i, in: b, message + " (OpenStep-format property list)")
    }
}
