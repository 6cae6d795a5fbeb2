import Yams

/// A thin walker over Yams' node tree that remembers where each value came from and turns
/// every mistake into a `PolicyError` carrying file, line and dotted key. Package-wide: the
/// daemon's configuration file (AppexDaemon) is read with the same rules and messages.
package struct YAMLNode {
    package let node: Node
    package let file: String
    package let key: String?

    package static func parse(_ text: String, file: String) throws -> YAMLNode {
        guard let root = try parseDocument(text, file: file) else {
            throw PolicyError(file: file, message: "file is empty")
        }
        return root
    }

    /// The document's root, or nil when the text holds no document (empty, or only comments).
    package static func parseDocument(_ text: String, file: String) throws -> YAMLNode? {
        do {
            return try Yams.compose(yaml: text).map { YAMLNode(node: $0, file: file, key: nil) }
        } catch YamlError.duplicatedKeysInMapping(let duplicates, let context) {
            // Yams marks the first copy of the key (the later ones are not located).
            throw PolicyError(
                file: file, line: context.mark.line, column: context.mark.column,
                key: duplicates.joined(separator: ", "),
                message: "duplicate key (this is its first occurrence in the mapping)")
        } catch let error as YamlError {
            throw PolicyError(file: file, line: Self.line(of: error), message: "not valid YAML: \(Self.problem(of: error))")
        } catch {
            throw PolicyError(file: file, message: "not valid YAML: \(error)")
        }
    }

    package var line: Int? { node.mark?.line }
    package var column: Int? { node.mark?.column }

    package func error(_ message: String) -> PolicyError {
        PolicyError(file: file, line: line, column: column, key: key, message: message)
    }

    private func child(_ node: Node, _ name: String) -> YAMLNode {
        YAMLNode(node: node, file: file, key: key.map { "\($0).\(name)" } ?? name)
    }

    /// The mapping's entries, refusing keys outside `allowed` (a typo must not be ignored).
    package func mapping(allowed: Set<String>) throws -> [(String, YAMLNode)] {
        guard let mapping = node.mapping else { throw error("expected a mapping, found \(kind)") }
        var out: [(String, YAMLNode)] = []
        var seen = Set<String>()
        for (k, v) in mapping {
            guard let name = k.scalar?.string else {
                throw YAMLNode(node: k, file: file, key: key).error("keys must be plain strings")
            }
            let entry = child(v, name)
            guard allowed.contains(name) else {
                throw PolicyError(
                    file: file, line: k.mark?.line, column: k.mark?.column, key: entry.key,
                    message: "unknown key \"\(name)\" (allowed: \(allowed.sorted().joined(separator: ", ")))")
            }
            guard seen.insert(name).inserted else {
                throw PolicyError(file: file, line: k.mark?.line, column: k.mark?.column, key: entry.key, message: "duplicate key")
            }
            out.append((name, entry))
        }
        return out
    }

    package func sequence() throws -> [YAMLNode] {
        guard let seq = node.sequence else { throw error("expected a list, found \(kind)") }
        return seq.enumerated().map { i, n in
            YAMLNode(node: n, file: file, key: "\(key ?? "")[\(i)]")
        }
    }

    package func string() throws -> String {
        guard let s = node.scalar else { throw error("expected a string, found \(kind)") }
        return s.string
    }

    package func strings() throws -> [String] { try sequence().map { try $0.string() } }

    package func int(in range: ClosedRange<Int>) throws -> Int {
        guard let s = node.scalar, let v = Int(s.string) else { throw error("expected a whole number, found \(describe)") }
        guard range.contains(v) else { throw error("\(v) is out of range \(range.lowerBound)…\(range.upperBound)") }
        return v
    }

    package func bool() throws -> Bool {
        guard let s = node.scalar else { throw error("expected true or false, found \(kind)") }
        switch s.string {
        case "true": return true
        case "false": return false
        default: throw error("expected true or false, found \"\(s.string)\"")
        }
    }

    package func byteSize() throws -> ByteSize {
        guard let s = node.scalar, let size = ByteSize(parsing: s.string) else {
            throw error("expected a size such as 120MiB, found \(describe)")
        }
        return size
    }

    package func duration() throws -> Duration {
        guard let s = node.scalar, let d = PolicyDuration.parse(s.string) else {
            throw error("expected a duration such as 1s or 500ms, found \(describe)")
        }
        return d
    }

    private var kind: String {
        switch node {
        case .scalar: "a scalar"
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .alias: "an alias"
        }
    }

    private var describe: String {
        if let s = node.scalar { return "\"\(s.string)\"" }
        return kind
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _): mark.line
        default: nil
        }
    }

    private static func problem(of error: YamlError) -> String {
        switch error {
        case .scanner(_, let p, _, _), .parser(_, let p, _, _), .composer(_, let p, _, _): p
        default: "\(error)"
        }
    }
}
