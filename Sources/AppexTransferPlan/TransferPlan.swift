/// What appexd hands `appex-transfer` on its standard input: one transfer, as `key value`
/// lines. appexd checked every value before writing it (Docs/transfers.md), and none holds a
/// line break, so a line is a field.
public struct TransferPlan: Sendable, Equatable {
    public enum Kind: String, Sendable { case download, upload }

    public var kind: Kind
    public var url: String
    public var method: String
    public var headers: [String]
    /// A plain name beneath the directory at descriptor 3.
    public var fileName: String
    /// The most bytes this transfer may move (what is left of the quota).
    public var quotaBytes: Int64
    /// Seconds left before the policy's time limit.
    public var timeLimitSeconds: Int64
    /// Attempts after the first failure of a connection or a server error.
    public var retries: Int
    /// The validator a partial download was started under; resumed only if it still matches.
    public var etag: String?
    public var maxRedirects: Int

    public init(
        kind: Kind, url: String, method: String, headers: [String] = [], fileName: String, quotaBytes: Int64,
        timeLimitSeconds: Int64, retries: Int = 4, etag: String? = nil, maxRedirects: Int = 5
    ) {
        self.kind = kind
        self.url = url
        self.method = method
        self.headers = headers
        self.fileName = fileName
        self.quotaBytes = quotaBytes
        self.timeLimitSeconds = timeLimitSeconds
        self.retries = retries
        self.etag = etag
        self.maxRedirects = maxRedirects
    }

    /// The name of a download's bytes until it is complete, beside the file.
    public static func partialName(of fileName: String) -> String { "." + fileName + ".appex-partial" }

    /// Why `name` may not name a file in the container, or nil: one component, no `/`, NUL,
    /// line break, not `.` or `..`, not the partial-file prefix, at most 255 bytes.
    public static func fileNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "is empty" }
        if name == "." || name == ".." { return "is \(name)" }
        if name.utf8.count > 255 { return "is longer than 255 bytes" }
        if name.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 || $0 == 10 || $0 == 13 }) {
            return "contains '/', NUL or a line break"
        }
        if name.hasSuffix(".appex-partial") { return "ends in .appex-partial (appexd's own)" }
        return nil
    }

    public var encoded: String {
        var lines = [
            "kind \(kind.rawValue)", "url \(url)", "method \(method)", "file \(fileName)",
            "quota \(quotaBytes)", "time \(timeLimitSeconds)", "retries \(retries)", "redirects \(maxRedirects)",
        ]
        if let etag { lines.append("etag \(etag)") }
        lines += headers.map { "header \($0)" }
        return lines.joined(separator: "\n") + "\n"
    }

    public init(decoding text: String) throws(TransferPlanError) {
        var fields: [String: String] = [:]
        var headers: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let space = line.firstIndex(of: " ") else { throw TransferPlanError("line without a value: \(line)") }
            let key = String(line[..<space]), value = String(line[line.index(after: space)...])
            if key == "header" { headers.append(value) } else { fields[key] = value }
        }
        func field(_ key: String) throws(TransferPlanError) -> String {
            guard let v = fields[key] else { throw TransferPlanError("no \(key)") }
            return v
        }
        func number(_ key: String) throws(TransferPlanError) -> Int64 {
            guard let v = Int64(try field(key)) else { throw TransferPlanError("\(key) is not a number") }
            return v
        }
        guard let kind = Kind(rawValue: try field("kind")) else { throw TransferPlanError("unknown kind") }
        self.init(
            kind: kind, url: try field("url"), method: try field("method"), headers: headers,
            fileName: try field("file"), quotaBytes: try number("quota"), timeLimitSeconds: try number("time"),
            retries: Int(try number("retries")), etag: fields["etag"], maxRedirects: Int(try number("redirects")))
    }
}

public struct TransferPlanError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
