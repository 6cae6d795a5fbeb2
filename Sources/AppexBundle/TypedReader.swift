/// Reads typed fields out of a plist dictionary and records a finding, with the key path, for
/// each value of the wrong type instead of failing: one bad key must not hide the others.
struct TypedReader {
    private(set) var findings: [Finding] = []

    mutating func appendFinding(_ finding: Finding) { findings.append(finding) }

    mutating func string(_ key: String, in dict: [String: PlistValue], at path: PlistKeyPath) -> String? {
        guard let value = dict[key] else { return nil }
        if case .string(let s) = value { return s }
        findings.append(.error("plist.type", at: path.appending(key), "expected string, found \(value.typeName)"))
        return nil
    }

    mutating func dictionary(_ key: String, in dict: [String: PlistValue], at path: PlistKeyPath) -> [String: PlistValue]? {
        guard let value = dict[key] else { return nil }
        if case .dictionary(let d) = value { return d }
        findings.append(.error("plist.type", at: path.appending(key), "expected dictionary, found \(value.typeName)"))
        return nil
    }

    mutating func stringArray(_ key: String, in dict: [String: PlistValue], at path: PlistKeyPath) -> [String]? {
        guard let value = dict[key] else { return nil }
        guard case .array(let elements) = value else {
            findings.append(.error("plist.type", at: path.appending(key), "expected array of strings, found \(value.typeName)"))
            return nil
        }
        var out: [String] = []
        for (index, element) in elements.enumerated() {
            if case .string(let s) = element {
                out.append(s)
            } else {
                findings.append(.error("plist.type", at: path.appending(key).appending(index: index), "expected string, found \(element.typeName)"))
            }
        }
        return out
    }

    mutating func dictionaryArray(_ key: String, in dict: [String: PlistValue], at path: PlistKeyPath) -> [[String: PlistValue]] {
        guard let value = dict[key] else { return [] }
        guard case .array(let elements) = value else {
            findings.append(.error("plist.type", at: path.appending(key), "expected array of dictionaries, found \(value.typeName)"))
            return []
        }
        var out: [[String: PlistValue]] = []
        for (index, element) in elements.enumerated() {
            if case .dictionary(let d) = element {
                out.append(d)
            } else {
                findings.append(
                    .error("plist.type", at: path.appending(key).appending(index: index), "expected dictionary, found \(element.typeName)"))
            }
        }
        return out
    }

    mutating func bool(_ key: String, in dict: [String: PlistValue], at path: PlistKeyPath) -> Bool? {
        guard let value = dict[key] else { return nil }
        if case .bool(let b) = value { return b }
        findings.append(.error("plist.type", at: path.appending(key), "expected boolean, found \(value.typeName)"))
        return nil
    }
}
