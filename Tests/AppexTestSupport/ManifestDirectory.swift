import Foundation

/// A directory of manifests laid out like the conformance corpus: `plists/`, `entitlements/`,
/// `predicates.json`, and a tab-separated table saying what each file is. The repository's own
/// fixtures (`Tests/Fixtures`) and the real-world corpus share this shape, so one test body can
/// check both.
public struct ManifestDirectory: Sendable {
    /// What the table records about one file: written by hand when the file was added, an
    /// oracle independent of Appex's parser.
    public struct Entry: Sendable, Equatable {
        /// Relative to the directory, e.g. `plists/share-dict.plist`.
        public var file: String
        /// `NSExtensionPointIdentifier`, or `(entitlements)`.
        public var extensionPoint: String
        /// `dict`, `predicate` or `none`, as the table writes it.
        public var ruleKind: String
        /// `yes`/`no` when the table has a `valid` column (`appex validate`'s verdict), else nil.
        public var valid: Bool?
        public var notes: String

        /// The rule kind as `ActivationRuleSpec.kind` and `appex info --json` name it.
        public var specKind: String? { ["dict": "dictionary", "predicate": "predicate", "none": "none"][ruleKind] }
    }

    public let root: String
    public let tableName: String

    public init(root: String, tableName: String) {
        self.root = root
        self.tableName = tableName
    }

    public func path(_ relative: String) -> String { (root as NSString).appendingPathComponent(relative) }

    /// `dir/name` for every file in `dir`, sorted; empty when `dir` does not exist.
    public func files(in dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path(dir))) ?? []).sorted().map { "\(dir)/\($0)" }
    }

    /// The table's rows, read by column name so tables may differ in their other columns.
    /// Empty when the table is missing; a table without the needed columns is a test bug and traps.
    public var entries: [Entry] {
        guard let text = try? String(contentsOfFile: path(tableName), encoding: .utf8) else { return [] }
        var lines = text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        guard !lines.isEmpty else { return [] }
        let header = lines.removeFirst()
        func column(_ name: String) -> Int {
            guard let index = header.firstIndex(of: name) else { preconditionFailure("\(path(tableName)): no column \"\(name)\"") }
            return index
        }
        let file = column("file"), point = column("extension_point"), kind = column("rule_kind")
        let valid = header.firstIndex(of: "valid"), notes = header.firstIndex(of: "notes")
        return lines.filter { !$0.allSatisfy(\.isEmpty) }.map { cols in
            func cell(_ i: Int?) -> String { i.flatMap { $0 < cols.count ? cols[$0] : nil } ?? "" }
            return Entry(
                file: cell(file), extensionPoint: cell(point), ruleKind: cell(kind),
                valid: valid.map { cell($0) == "yes" }, notes: cell(notes))
        }
    }

    public func entry(_ file: String) -> Entry? { entries.first { $0.file == file } }

    /// `predicates.json`: a JSON array of predicate strings, whitespace as written.
    public func predicates() throws -> [String] {
        try JSONDecoder().decode([String].self, from: Data(contentsOf: URL(fileURLWithPath: path("predicates.json"))))
    }
}
