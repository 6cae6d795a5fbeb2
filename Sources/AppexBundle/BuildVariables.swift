/// Xcode build-setting references (`$(PRODUCT_MODULE_NAME)`, `${APP_NAME}`) left in a source
/// Info.plist. Xcode substitutes them when it builds; an installed bundle must not have any.
public enum BuildVariables {
    /// Names of the variables referenced in `text`, in order, without modifiers
    /// (`$(PRODUCT_NAME:rfc1034identifier)` → `PRODUCT_NAME`).
    public static func references(in text: String) -> [String] {
        var names: [String] = []
        let chars = Array(text.unicodeScalars)
        var i = 0
        while i + 1 < chars.count {
            if chars[i] == "$", let close = closing(for: chars[i + 1]) {
                var j = i + 2
                while j < chars.count, chars[j] != close { j += 1 }
                if j < chars.count {
                    let inner = String(String.UnicodeScalarView(chars[(i + 2)..<j]))
                    let name = inner.split(separator: ":", maxSplits: 1).first.map(String.init) ?? inner
                    if !name.isEmpty { names.append(name) }
                    i = j + 1
                    continue
                }
            }
            i += 1
        }
        return names
    }

    /// Replaces references whose name is in `definitions` (as `xcodebuild` would with build
    /// settings); unknown references are left in place so validation still reports them.
    public static func substitute(_ text: String, with definitions: [String: String]) -> String {
        guard !definitions.isEmpty, text.contains("$") else { return text }
        var out = ""
        let chars = Array(text.unicodeScalars)
        var i = 0
        while i < chars.count {
            if chars[i] == "$", i + 1 < chars.count, let close = closing(for: chars[i + 1]) {
                var j = i + 2
                while j < chars.count, chars[j] != close { j += 1 }
                if j < chars.count {
                    let inner = String(String.UnicodeScalarView(chars[(i + 2)..<j]))
                    let name = inner.split(separator: ":", maxSplits: 1).first.map(String.init) ?? inner
                    if let value = definitions[name] {
                        out += value
                        i = j + 1
                        continue
                    }
                }
            }
            out.unicodeScalars.append(chars[i])
            i += 1
        }
        return out
    }

    /// Applies `substitute` to every string in a plist tree.
    public static func substitute(_ value: PlistValue, with definitions: [String: String]) -> PlistValue {
        guard !definitions.isEmpty else { return value }
        switch value {
        case .string(let s): return .string(substitute(s, with: definitions))
        case .array(let a): return .array(a.map { substitute($0, with: definitions) })
        case .dictionary(let d): return .dictionary(d.mapValues { substitute($0, with: definitions) })
        default: return value
        }
    }

    private static func closing(for open: Unicode.Scalar) -> Unicode.Scalar? {
        switch open {
        case "(": ")"
        case "{": "}"
        default: nil
        }
    }
}
