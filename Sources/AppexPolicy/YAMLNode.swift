import Yams

/// A thin walker over Yams' node tree that remembers where each value came from and turns
/// every mistake into a `PolicyError` carrying file, line and dotted key.
struct YAMLNode {
    let node: Node
    let file: String
    let key: String?

    static func parse(_ text: String, file: String) throws -> YAMLNode {
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw PolicyError(file: file, message: "file is empty")
            }
            return YAMLNode(node: node, file: file, key: nil)
        } catch let error as PolicyError {
            throw error
        } catch let error as YamlError {
            throw PolicyError(file: file, line: Self.line(of: error), message: "not valid YAML: \(Self.problem(of: error))")
        } catch {
            throw PolicyError(file: file, message: "not valid YAML: \(error)")
        }
    }

    var line: Int? { node.mark?.line }
    var column: Int? { node.mark?.column }

    func error(_ message: String) -> PolicyError {
        PolicyError(file: file, line: line, column: column, key: key, message: message)
    }

    private func child(_ node: Node, _ name: String) -> YAMLNode {
        YAMLNode(node: node, file: file, key: key.map { "\($0).\(name)" } ?? name)
    }

    /// The mapping's entries, refusing keys outside `allowed` (a typo must not be ignored).
    func mapping(allowed: Set<String>) throws -> [(String, YAMLNode)] {
        guard let mapping = node.mapping else { throw error("expected a mapping, found \(kind)") }
        var out: [(String, YAMLNode)] = []
        var seen = Set<String>()
        for (k, v) in mapping {
            guard let name = k.scalar?.string else {
                throw YAMLNode(node: k, file: file, key: key).error("keys must be plain strings")
            }
            let entry = child(v, name)
            guard allowed.contains(name) else {
                throw PolicyError(file: file, line: k.mark?.line, column: k.mark?.column, key: entry.key,
                                  message: "unknown key \"\(name)\" (allowed: \(allowed.sorted().joined(separator: ", ")))")
            }
            guard seen.insert(name).inserted else {
                throw PolicyError(file: file, line: k.mark?.line, column: k.mark?.column, key: entry.key, message: "duplicate key")
            }
            out.append((name, entry))
        }
        return out
    }

    func sequence() throws -> [YAMLNode] {
        guard let seq = node.sequence else { throw error("expected a list, found \(kind)") }
        return seq.enumerated().map { i, n in
            YAMLNode(node: n, file: file, key: "\(key ?? "")[\(i)]")
        }
    }

    func string() throws -> String {
        guard let s = node.scalar else { throw error("expected a string, found \(kind)") }
        return s.string
    }

    func strings() throws -> [String] { try sequence().map { try $0.string() } }

    func int(in range: ClosedRange<Int>) throws -> Int {
        guard let s = node.scalar, let v = Int(s.string) else { throw error("expected a whole number, found \(describe)") }
        guard range.contains(v) else { throw error("\(v) is out of range \(range.lowerBound)…\(range.upperBound)") }
        return v
    }

    func bool() throws -> Bool {
        guard let s = node.scalar else { throw error("expected true or false, found \(kind)") }
        switch s.string {
        case "true": return true
        case "false": return false
        default: throw error("expected true or false, found \"\(s.string)\"")
        }
    }

    func byteSize() throws -> ByteSize {
        guard let s = node.scalar, let size = ByteSize(parsing: s.string) else {
            throw error("expected a size such as 120MiB, found \(describe)")
        }
        return size
    }

    func duration() throws -> Duration {
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
