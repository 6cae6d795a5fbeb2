import AppexBundle

/// One uniform type declaration: an identifier, what it conforms to, and its filename-extension
/// and MIME-type tags. System types, policy files and bundles all declare types this way.
public struct UTTypeDeclaration: Sendable, Hashable {
    public var identifier: String
    public var conformsTo: [String]
    public var filenameExtensions: [String]
    public var mimeTypes: [String]

    public init(_ identifier: String, conformsTo: [String] = [], extensions: [String] = [], mimeTypes: [String] = []) {
        self.identifier = identifier
        self.conformsTo = conformsTo
        self.filenameExtensions = extensions
        self.mimeTypes = mimeTypes
    }
}

/// Why a declaration was refused.
public enum UTTypeGraphError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Declaring the type would make it conform to itself through its parents.
    case cycle([String])
    case emptyIdentifier
    /// The identifier is not a reverse-DNS-like string (letters, digits, `.`, `-`).
    case invalidIdentifier(String)

    public var description: String {
        switch self {
        case .cycle(let path): "conformance cycle: \(path.joined(separator: " → "))"
        case .emptyIdentifier: "empty type identifier"
        case .invalidIdentifier(let s): "invalid type identifier \"\(s)\""
        }
    }
}

/// The uniform-type conformance graph: a DAG over type identifiers with multiple parents.
///
/// Identifiers are compared case-insensitively, as Apple does. Conformance is reflexive and
/// transitive; each node keeps its full ancestor set as a bit set, so a conformance test during
/// rule evaluation is one bit lookup. A value type: copies are cheap and safe to share.
public struct UTTypeGraph: Sendable {
    /// Lowercased identifier → node index.
    private var index: [String: Int] = [:]
    /// Identifiers as first declared (case kept for printing).
    private(set) var names: [String] = []
    /// Direct parents, as node indices.
    private var parents: [[Int]] = []
    /// Reflexive-transitive ancestors of each node.
    private var ancestors: [BitSet] = []
    private var byExtension: [String: Int] = [:]
    private var byMIME: [String: Int] = [:]
    private var extensionsOf: [[String]] = []
    private var mimesOf: [[String]] = []

    /// An empty graph (not even `public.item`); most callers want `.system`.
    public init() {}

    /// The system-declared types (see `SystemTypes.swift`).
    public static let system: UTTypeGraph = {
        var graph = UTTypeGraph()
        for declaration in SystemTypes.declarations {
            // The table is ours and acyclic; a failure here is a bug caught by the unit tests.
            _ = try? graph.declare(declaration)
        }
        return graph
    }()

    /// Number of known types.
    public var count: Int { names.count }

    /// Every known identifier, in declaration order.
    public var identifiers: [String] { names }

    /// Whether the identifier is declared.
    public func contains(_ identifier: String) -> Bool { index[identifier.lowercased()] != nil }

    /// Node index for an identifier, or nil when it is undeclared.
    func node(_ identifier: String) -> Int? {
        // Keys are lowercased; most identifiers already are, so try without allocating first.
        index[identifier] ?? index[identifier.lowercased()]
    }

    /// Whether `type` conforms to `other` (reflexive). An undeclared type conforms only to itself.
    public func conforms(_ type: String, to other: String) -> Bool {
        if type.caseInsensitiveEquals(other) { return true }
        guard let a = node(type), let b = node(other) else { return false }
        return ancestors[a].contains(b)
    }

    /// The ancestor sets, indexed by node.
    var ancestorSets: [BitSet] { ancestors }

    /// All ancestor sets in one array, `ancestorStride` words per node, for the evaluator.
    private(set) var flatAncestors: [UInt64] = []
    private(set) var ancestorStride = 1

    /// Node indices of the types dictionary rules classify by, -1 when undeclared.
    private(set) var wellKnown = WellKnownNodes()

    struct WellKnownNodes: Sendable, Hashable {
        var image = -1, movie = -1, html = -1, propertyList = -1, text = -1, fileURL = -1, url = -1, data = -1
    }

    /// Node-level conformance used by the evaluator.
    func conforms(node a: Int, to b: Int) -> Bool { ancestors[a].contains(b) }

    /// All types `identifier` conforms to, itself included, sorted; empty when undeclared.
    public func supertypes(of identifier: String) -> [String] {
        guard let n = node(identifier) else { return [] }
        return ancestors[n].members.map { names[$0] }.sorted()
    }

    /// Direct parents as declared.
    public func parents(of identifier: String) -> [String] {
        guard let n = node(identifier) else { return [] }
        return parents[n].map { names[$0] }
    }

    /// The preferred type for a filename extension (`jpg`, `.JPG`), or nil.
    public func type(forFilenameExtension ext: String) -> String? {
        var e = ext.lowercased()
        if e.hasPrefix(".") { e.removeFirst() }
        return byExtension[e].map { names[$0] }
    }

    /// The preferred type for a MIME type (parameters such as `; charset=utf-8` are ignored).
    public func type(forMIMEType mime: String) -> String? {
        let bare = mime.split(separator: ";", maxSplits: 1).first.map { $0.trimmingSpaces() } ?? ""
        return byMIME[bare.lowercased()].map { names[$0] }
    }

    /// The type identifiers for a file name: its extension's type, or `public.data` when the
    /// extension is unknown (a host can still offer it as generic data).
    public func types(forFileName name: String) -> [String] {
        let base = name.split(separator: "/").last.map(String.init) ?? name
        if let dot = base.lastIndex(of: "."), dot != base.startIndex {
            let ext = String(base[base.index(after: dot)...])
            if let t = type(forFilenameExtension: ext) { return [t] }
        }
        return ["public.data"]
    }

    public func filenameExtensions(of identifier: String) -> [String] {
        node(identifier).map { extensionsOf[$0] } ?? []
    }

    public func mimeTypes(of identifier: String) -> [String] {
        node(identifier).map { mimesOf[$0] } ?? []
    }

    /// Adds a type, or extends an existing one with more parents and tags.
    ///
    /// Parents that are not declared yet are created as bare types (Apple allows forward
    /// references in declaration lists). Refuses a declaration that would create a cycle and
    /// leaves the graph unchanged in that case. Tags already claimed by another type keep their
    /// first owner: system types win over later declarations.
    public mutating func declare(_ declaration: UTTypeDeclaration) throws(UTTypeGraphError) {
        let id = declaration.identifier
        guard !id.isEmpty else { throw .emptyIdentifier }
        guard Self.isValidIdentifier(id) else { throw .invalidIdentifier(id) }
        for p in declaration.conformsTo where !Self.isValidIdentifier(p) { throw .invalidIdentifier(p) }

        // Check for a cycle before mutating: a parent that already conforms to `id` closes one.
        if let n = node(id) {
            for p in declaration.conformsTo {
                if let pn = node(p), ancestors[pn].contains(n) {
                    throw .cycle([names[n], names[pn]] + path(from: pn, to: n).dropFirst().map { names[$0] })
                }
                if p.caseInsensitiveEquals(id) { throw .cycle([id, id]) }
            }
        } else if declaration.conformsTo.contains(where: { $0.caseInsensitiveEquals(id) }) {
            throw .cycle([id, id])
        }

        let n = ensureNode(id)
        for p in declaration.conformsTo {
            let pn = ensureNode(p)
            if !parents[n].contains(pn) { parents[n].append(pn) }
        }
        for ext in declaration.filenameExtensions {
            var e = ext.lowercased()
            if e.hasPrefix(".") { e.removeFirst() }
            if !extensionsOf[n].contains(e) { extensionsOf[n].append(e) }
            if byExtension[e] == nil { byExtension[e] = n }
        }
        for m in declaration.mimeTypes {
            let lm = m.lowercased()
            if !mimesOf[n].contains(lm) { mimesOf[n].append(lm) }
            if byMIME[lm] == nil { byMIME[lm] = n }
        }
        recomputeAncestors()
    }

    /// Declares several types in order; stops at the first refusal.
    public mutating func declare(_ declarations: [UTTypeDeclaration]) throws(UTTypeGraphError) {
        for d in declarations { try declare(d) }
    }

    /// Reads `UTExportedTypeDeclarations` / `UTImportedTypeDeclarations` entries from a bundle
    /// (each a dictionary with `UTTypeIdentifier`, `UTTypeConformsTo`, `UTTypeTagSpecification`)
    /// and declares them. Returns findings with key paths for entries it could not use; good
    /// entries are declared even when others are bad.
    @discardableResult
    public mutating func declare(bundleDeclarations entries: [[String: PlistValue]], at keyPath: PlistKeyPath) -> [Finding] {
        var findings: [Finding] = []
        for (i, entry) in entries.enumerated() {
            let at = keyPath.appending(index: i)
            guard let id = entry["UTTypeIdentifier"]?.stringValue, !id.isEmpty else {
                findings.append(
                    .error(
                        "types.identifier", at: at.appending("UTTypeIdentifier"),
                        "a type declaration needs a UTTypeIdentifier string"))
                continue
            }
            let conforms = Self.strings(entry["UTTypeConformsTo"], at: at.appending("UTTypeConformsTo"), &findings)
            var exts: [String] = []
            var mimes: [String] = []
            if let tags = entry["UTTypeTagSpecification"] {
                let tagsAt = at.appending("UTTypeTagSpecification")
                if let dict = tags.dictionaryValue {
                    exts = Self.strings(dict["public.filename-extension"], at: tagsAt.appending("public.filename-extension"), &findings)
                    mimes = Self.strings(dict["public.mime-type"], at: tagsAt.appending("public.mime-type"), &findings)
                } else {
                    findings.append(.error("types.tags", at: tagsAt, "expected dictionary, found \(tags.typeName)"))
                }
            }
            do {
                try declare(UTTypeDeclaration(id, conformsTo: conforms, extensions: exts, mimeTypes: mimes))
            } catch {
                findings.append(.error("types.declaration", at: at, "type \(id) refused: \(error)"))
            }
        }
        return findings
    }

    /// A string or an array of strings (Apple accepts both for tags and conformances).
    private static func strings(_ value: PlistValue?, at: PlistKeyPath, _ findings: inout [Finding]) -> [String] {
        switch value {
        case nil: return []
        case .string(let s): return [s]
        case .array(let a):
            var out: [String] = []
            for (i, v) in a.enumerated() {
                if let s = v.stringValue {
                    out.append(s)
                } else {
                    findings.append(.error("types.value-type", at: at.appending(index: i), "expected string, found \(v.typeName)"))
                }
            }
            return out
        case .some(let other):
            findings.append(.error("types.value-type", at: at, "expected string or array of strings, found \(other.typeName)"))
            return []
        }
    }

    static func isValidIdentifier(_ s: String) -> Bool {
        guard !s.isEmpty, s.utf8.count <= 255 else { return false }
        return s.unicodeScalars.allSatisfy { c in
            (c.value >= 0x30 && c.value <= 0x39) || (c.value >= 0x41 && c.value <= 0x5A) || (c.value >= 0x61 && c.value <= 0x7A)
                || c == "." || c == "-" || c == "_" || c.value > 0x7F
        }
    }

    private mutating func ensureNode(_ id: String) -> Int {
        let key = id.lowercased()
        if let n = index[key] { return n }
        let n = names.count
        index[key] = n
        names.append(id)
        parents.append([])
        extensionsOf.append([])
        mimesOf.append([])
        ancestors.append(BitSet())
        return n
    }

    /// Any path of parent edges from `a` up to `b` (for the cycle message).
    private func path(from a: Int, to b: Int) -> [Int] {
        var seen = Set<Int>()
        func walk(_ n: Int) -> [Int]? {
            if n == b { return [n] }
            guard seen.insert(n).inserted else { return nil }
            for p in parents[n] { if let rest = walk(p) { return [n] + rest } }
            return nil
        }
        return walk(a) ?? [a, b]
    }

    /// Recomputes all ancestor sets; graphs are a few hundred nodes, declared rarely.
    private mutating func recomputeAncestors() {
        var result = [BitSet?](repeating: nil, count: names.count)
        func compute(_ n: Int) -> BitSet {
            if let done = result[n] { return done }
            var set = BitSet()
            set.insert(n)
            for p in parents[n] { set.formUnion(compute(p)) }
            result[n] = set
            return set
        }
        ancestors = (0..<names.count).map(compute)
        let stride = max(1, (names.count + 63) / 64)
        var flat = [UInt64](repeating: 0, count: stride * names.count)
        for (n, set) in ancestors.enumerated() {
            for m in set.members { flat[n * stride + (m >> 6)] |= 1 << UInt64(m & 63) }
        }
        flatAncestors = flat
        ancestorStride = stride
        let idx = index
        let n = { (id: String) in idx[id] ?? -1 }
        wellKnown = WellKnownNodes(
            image: n("public.image"), movie: n("public.movie"), html: n("public.html"),
            propertyList: n("com.apple.property-list"), text: n("public.text"),
            fileURL: n("public.file-url"), url: n("public.url"), data: n("public.data"))
    }
}

/// A small growable bit set over node indices.
struct BitSet: Sendable, Hashable {
    private var words: [UInt64] = []

    @inline(__always) func contains(_ i: Int) -> Bool {
        let w = i >> 6
        return w < words.count && words[w] & (1 << UInt64(i & 63)) != 0
    }

    mutating func insert(_ i: Int) {
        let w = i >> 6
        if w >= words.count { words.append(contentsOf: repeatElement(0, count: w - words.count + 1)) }
        words[w] |= 1 << UInt64(i & 63)
    }

    mutating func formUnion(_ other: BitSet) {
        if other.words.count > words.count { words.append(contentsOf: repeatElement(0, count: other.words.count - words.count)) }
        for i in other.words.indices { words[i] |= other.words[i] }
    }

    var members: [Int] {
        var out: [Int] = []
        for (w, word) in words.enumerated() where word != 0 {
            for b in 0..<64 where word & (1 << UInt64(b)) != 0 { out.append(w * 64 + b) }
        }
        return out
    }
}

extension String {
    func caseInsensitiveEquals(_ other: String) -> Bool {
        if self == other { return true }
        guard utf8.count == other.utf8.count else { return false }
        return lowercased() == other.lowercased()
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
