import AppexBundle

/// The dictionary form of `NSExtensionActivationRule`, compiled.
///
/// Each attachment is classified into categories by type conformance:
/// image (`public.image`), movie (`public.movie`), web page (`public.html` or
/// `com.apple.property-list`, the Safari JavaScript-preprocessing result), web URL (`public.url`
/// but not `public.file-url`), text (`public.text`), file (`public.file-url`, or `public.data`
/// that is not a URL). An item's `attributedContentText` counts as text.
///
/// The request activates when (1) it carries some content, (2) every attachment falls in at
/// least one category the rule supports (key present with a count ≥ 1, or Text = true), (3) for
/// each supported category, the attachments counted in it are at most its MaxCount, (4) the total
/// attachment count is within AttachmentsWithMaxCount/MinCount when given, and (5) text is
/// present only if Text is true.
///
/// Counting: by default an attachment counts toward every category it conforms to (a JPEG is
/// an image and a file). With `NSExtensionActivationUsesStrictMatching` in a version-2 rule, it
/// counts only toward its most specific categories: file only when nothing else matched, and
/// text not when it is a web page.
public struct DictionaryRule: Sendable, Hashable {
    public enum Category: String, Sendable, Hashable, CaseIterable {
        case image, movie, webPage, webURL, text, file

        /// The rule key that bounds this category.
        public var key: String {
            switch self {
            case .image: "NSExtensionActivationSupportsImageWithMaxCount"
            case .movie: "NSExtensionActivationSupportsMovieWithMaxCount"
            case .webPage: "NSExtensionActivationSupportsWebPageWithMaxCount"
            case .webURL: "NSExtensionActivationSupportsWebURLWithMaxCount"
            case .text: "NSExtensionActivationSupportsText"
            case .file: "NSExtensionActivationSupportsFileWithMaxCount"
            }
        }

        var bit: UInt8 { 1 << UInt8(ordinal) }

        var ordinal: Int {
            switch self {
            case .image: 0
            case .movie: 1
            case .webPage: 2
            case .webURL: 3
            case .text: 4
            case .file: 5
            }
        }

        /// `allCases` without allocating on every use in the evaluation loop.
        static let ordered: [Category] = allCases

        var noun: String {
            switch self {
            case .image: "image"
            case .movie: "movie"
            case .webPage: "web page"
            case .webURL: "web URL"
            case .text: "text"
            case .file: "file"
            }
        }
    }

    /// MaxCount per category; absent or 0 means unsupported. Text uses `Int.max` when true.
    public var maxCounts: [Category: Int]
    public var attachmentsMaxCount: Int?
    public var attachmentsMinCount: Int?
    /// `NSExtensionActivationDictionaryVersion`, 1 when absent.
    public var version: Int
    /// `NSExtensionActivationUsesStrictMatching` as written.
    public var usesStrictMatching: Bool

    /// Strict counting is in force (strict matching requires dictionary version 2).
    public var strict: Bool { usesStrictMatching && version >= 2 }

    public static let versionKey = "NSExtensionActivationDictionaryVersion"
    public static let strictKey = "NSExtensionActivationUsesStrictMatching"
    public static let attachmentsMaxKey = "NSExtensionActivationSupportsAttachmentsWithMaxCount"
    public static let attachmentsMinKey = "NSExtensionActivationSupportsAttachmentsWithMinCount"

    public static var knownKeys: [String] {
        Category.allCases.map(\.key) + [versionKey, strictKey, attachmentsMaxKey, attachmentsMinKey]
    }

    /// The category is supported: its key is present with a count ≥ 1 (Text: true).
    public func supports(_ c: Category) -> Bool { (maxCounts[c] ?? 0) > 0 }

    /// Compiles the dictionary; returns nil only when a value is unusable (an error finding).
    static func compile(_ dict: [String: PlistValue], at keyPath: PlistKeyPath) -> (DictionaryRule?, [Finding]) {
        var findings: [Finding] = []
        var ok = true
        var rule = DictionaryRule(maxCounts: [:], attachmentsMaxCount: nil, attachmentsMinCount: nil, version: 1, usesStrictMatching: false)

        func count(_ key: String) -> Int? {
            guard let v = dict[key] else { return nil }
            let at = keyPath.appending(key)
            switch v {
            case .integer(let n) where n >= 0:
                return Int(clamping: n)
            case .integer(let n):
                findings.append(.error("activation.count-type", at: at, "a count must not be negative (found \(n))"))
            case .string(let s):
                // Apple reads counts with integerValue, so a numeric string works: accept, warn.
                let trimmed = Substring(s).trimmingSpaces()
                if let n = Int(trimmed), n >= 0 {
                    findings.append(.warning("activation.count-type", at: at, "count written as <string>\(s)</string>; use <integer>\(n)</integer>"))
                    return n
                }
                findings.append(.error("activation.count-type", at: at, "expected an integer count, found the string \"\(s)\""))
            case .real(let d) where d >= 0 && d == d.rounded() && d < 1e9:
                findings.append(.warning("activation.count-type", at: at, "count written as <real>; use <integer>\(Int(d))</integer>"))
                return Int(d)
            default:
                findings.append(.error("activation.count-type", at: at, "expected an integer count, found \(v.typeName)"))
            }
            ok = false
            return nil
        }

        for c in Category.allCases where c != .text {
            if let n = count(c.key) { rule.maxCounts[c] = n }
        }
        rule.attachmentsMaxCount = count(attachmentsMaxKey)
        rule.attachmentsMinCount = count(attachmentsMinKey)
        if let v = dict[Category.text.key] {
            if let b = v.boolValue {
                if b { rule.maxCounts[.text] = Int.max }
            } else {
                findings.append(.error("activation.value-type", at: keyPath.appending(Category.text.key), "expected a boolean, found \(v.typeName)"))
                ok = false
            }
        }
        if let v = dict[strictKey] {
            if let b = v.boolValue {
                rule.usesStrictMatching = b
            } else {
                findings.append(.error("activation.value-type", at: keyPath.appending(strictKey), "expected a boolean, found \(v.typeName)"))
                ok = false
            }
        }
        if let v = dict[versionKey] {
            if let n = v.integerValue, n == 1 || n == 2 {
                rule.version = Int(n)
            } else {
                findings.append(
                    .error(
                        "activation.version", at: keyPath.appending(versionKey),
                        "expected <integer>1</integer> or <integer>2</integer>, found \(v.typeName == "integer" ? String(v.integerValue ?? 0) : v.typeName)"
                    ))
                ok = false
            }
        }
        if rule.usesStrictMatching && rule.version < 2 {
            findings.append(
                .warning(
                    "activation.strict-needs-v2", at: keyPath.appending(strictKey),
                    "strict matching applies only with \(versionKey) 2; it is ignored here"))
        }
        for key in dict.keys.sorted() where !knownKeys.contains(key) {
            findings.append(
                .warning("activation.unknown-key", at: keyPath.appending(key), "unknown activation key \"\(key)\" is ignored (Apple ignores it too)"))
        }
        if let lo = rule.attachmentsMinCount, let hi = rule.attachmentsMaxCount, lo > hi {
            findings.append(
                .warning(
                    "activation.accepts-nothing", at: keyPath.appending(attachmentsMinKey),
                    "AttachmentsWithMinCount \(lo) exceeds AttachmentsWithMaxCount \(hi): no request with attachments can activate"))
        }
        if ok && !Category.allCases.contains(where: rule.supports) {
            findings.append(.warning("activation.accepts-nothing", at: keyPath, "the rule supports no content type, so no request activates it"))
        }
        return (ok ? rule : nil, findings)
    }

    /// Categories of one attachment as a bit mask (bit = `Category` index), before strict
    /// reduction. Undeclared identifiers only match a category named by exactly that identifier.
    static func categoryMask(of a: PreparedItems.AttachmentRecord, in items: PreparedItems) -> UInt8 {
        let k = items.graph.wellKnown
        let ancestors = items.graph.flatAncestors
        let stride = items.graph.ancestorStride
        var isURL = false, isFileURL = false, isData = false
        var mask: UInt8 = 0
        for t in Int(a.firstType)..<Int(a.endType) {
            let node = Int(items.typeNodes[t])
            func conforms(_ target: Int, _ name: String) -> Bool {
                if node >= 0 && target >= 0 { return ancestors[node &* stride &+ (target >> 6)] & (1 << UInt64(target & 63)) != 0 }
                return items.typeIdentifiers[t].caseInsensitiveEquals(name)
            }
            if conforms(k.image, "public.image") { mask |= Category.image.bit }
            if conforms(k.movie, "public.movie") { mask |= Category.movie.bit }
            if conforms(k.html, "public.html") || conforms(k.propertyList, "com.apple.property-list") { mask |= Category.webPage.bit }
            if conforms(k.text, "public.text") { mask |= Category.text.bit }
            let url = conforms(k.url, "public.url")
            if conforms(k.fileURL, "public.file-url") { isFileURL = true }
            if url { isURL = true }
            if !url && conforms(k.data, "public.data") { isData = true }
        }
        if isURL && !isFileURL { mask |= Category.webURL.bit }
        if isFileURL || isData { mask |= Category.file.bit }
        return mask
    }

    func evaluate(_ items: PreparedItems) -> ActivationResult {
        var counts = [Int](repeating: 0, count: 6)
        var supportedMask: UInt8 = 0
        for c in Category.ordered where supports(c) { supportedMask |= c.bit }
        var hasText = false
        for (i, item) in items.itemRecords.enumerated() {
            if let t = items.text(item.contentText), !t.isEmpty { hasText = true }
            for a in Int(item.firstAttachment)..<Int(item.endAttachment) {
                var mask = Self.categoryMask(of: items.attachmentRecords[a], in: items)
                if strict {
                    // Count only the most specific categories: file is the catch-all, and a
                    // web page is not also counted as text.
                    if mask & ~Category.file.bit != 0 { mask &= ~Category.file.bit }
                    if mask & Category.webPage.bit != 0 { mask &= ~Category.text.bit }
                }
                guard mask & supportedMask != 0 else {
                    let record = items.attachmentRecords[a]
                    let ids = items.typeIdentifiers[Int(record.firstType)..<Int(record.endType)].joined(separator: ", ")
                    let nouns = Category.allCases.filter { mask & $0.bit != 0 }.map(\.noun)
                    let what =
                        nouns.isEmpty
                        ? "is no image, movie, web page, web URL, text or file"
                        : "counts as " + nouns.joined(separator: " and ") + ", which the rule does not support"
                    return .notActivated(
                        "attachment \(a - Int(item.firstAttachment)) of item \(i) (\(ids.isEmpty ? "no type identifiers" : ids)) \(what)")
                }
                for c in Category.ordered where mask & c.bit != 0 { counts[c.ordinal] += 1 }
            }
        }
        let total = items.attachmentRecords.count
        if total == 0 && !hasText {
            return .notActivated("the request carries no attachments and no text")
        }
        if hasText && !supports(.text) {
            return .notActivated("the request carries text but \(Category.text.key) is not true")
        }
        for c in Category.ordered where c != .text && supports(c) {
            let n = counts[c.ordinal]
            let max = maxCounts[c] ?? 0
            if n > max {
                return .notActivated(
                    "\(n) attachments count as \(c.noun)\(n == 1 ? "" : "s") but \(c.key) is \(max)\(strict ? "" : " (non-strict counting: an attachment counts toward every category it conforms to)")"
                )
            }
        }
        if let max = attachmentsMaxCount, total > max {
            return .notActivated("\(total) attachments but \(Self.attachmentsMaxKey) is \(max)")
        }
        if let min = attachmentsMinCount, total < min {
            return .notActivated("\(total) attachments but \(Self.attachmentsMinKey) is \(min)")
        }
        return .activated
    }

    /// The rule as a dictionary of JSON-compatible values (for `info --json`).
    public var summary: [String: PlistValue] {
        var out: [String: PlistValue] = [:]
        for (c, n) in maxCounts {
            out[c.key] = c == .text ? .bool(true) : .integer(Int64(n))
        }
        if let n = attachmentsMaxCount { out[Self.attachmentsMaxKey] = .integer(Int64(n)) }
        if let n = attachmentsMinCount { out[Self.attachmentsMinKey] = .integer(Int64(n)) }
        out[Self.versionKey] = .integer(Int64(version))
        if usesStrictMatching { out[Self.strictKey] = .bool(true) }
        return out
    }
}
