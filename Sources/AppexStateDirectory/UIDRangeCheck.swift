import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Appex hands out host uids and gids from its own range (`UIDAllocator`). An id that some
/// account or a user namespace's subordinate range already uses would let that account's
/// processes signal, trace or own an extension's files, so the range is checked against
/// `/etc/passwd`, `/etc/group`, `/etc/subuid` and `/etc/subgid` before the first allocation,
/// and an overlap is refused with the entry named.
public enum UIDRangeCheck {
    private static let checked = Mutex<[String]>([])

    /// Throws when `range` overlaps an account or a subordinate range. Cached per process.
    public static func verify(_ range: ClosedRange<UInt32>, etc: String = "/etc") throws {
        let key = etc + ":" + String(range.lowerBound) + "-" + String(range.upperBound)
        if checked.withLock({ $0.contains(key) }) { return }
        if let conflict = conflicts(range, etc: etc).first {
            throw SandboxError(
                "check uid range", path: conflict.file, errno: .fileExists,
                message:
                    "Appex's uid range \(range.lowerBound)-\(range.upperBound) overlaps \(conflict.what); choose a free range (appex run --uid-range START-END)"
            )
        }
        checked.withLock { $0.append(key) }
    }

    public struct Conflict: Sendable, Equatable {
        public var file: String
        public var what: String
    }

    /// Every overlap found, in file order. The files are read as bytes and only a conflict's
    /// fields become Strings: this runs on every `appex run`, and splitting every line into
    /// Strings was a measurable part of it (Docs/decisions/0005-network-namespace-made-ahead.md).
    public static func conflicts(_ range: ClosedRange<UInt32>, etc: String = "/etc") -> [Conflict] {
        var out: [Conflict] = []
        // name:x:uid:... (passwd), name:x:gid:... (group): the third field.
        for file in ["passwd", "group"] {
            let path = etc + "/" + file
            let bytes = (try? Sys.readBytes(path)) ?? []
            forEachEntry(bytes) { fields in
                if fields.count > 2, let id = number(bytes, fields[2]), range.contains(id) {
                    out.append(Conflict(file: path, what: "\(file == "passwd" ? "uid" : "gid") \(id) of \"\(text(bytes, fields[0]))\" in \(path)"))
                }
            }
        }
        // name:start:count (subuid, subgid).
        for file in ["subuid", "subgid"] {
            let path = etc + "/" + file
            let bytes = (try? Sys.readBytes(path)) ?? []
            forEachEntry(bytes) { fields in
                guard fields.count > 2, let start = number(bytes, fields[1]), let count = number(bytes, fields[2]), count > 0 else { return }
                let end = start &+ (count - 1) < start ? UInt32.max : start + (count - 1)
                if start <= range.upperBound && range.lowerBound <= end {
                    out.append(Conflict(file: path, what: "the subordinate ids \(start)-\(end) of \"\(text(bytes, fields[0]))\" in \(path)"))
                }
            }
        }
        return out
    }

    /// Where one colon-separated field lies in the file's bytes.
    struct Field: Equatable {
        var start: Int
        var end: Int
    }

    /// Calls `body` with the fields of each line that is not empty, blank or a comment (`#`
    /// after leading spaces); a field may be empty. One reused array: no allocation per line.
    static func forEachEntry(_ bytes: [UInt8], _ body: ([Field]) -> Void) {
        var fields: [Field] = []
        var i = 0
        while i < bytes.count {
            var lineEnd = i
            while lineEnd < bytes.count && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            var s = i
            while s < lineEnd && bytes[s] == UInt8(ascii: " ") { s += 1 }
            if s < lineEnd && bytes[s] != UInt8(ascii: "#") {
                fields.removeAll(keepingCapacity: true)
                var fieldStart = s
                var j = s
                while j <= lineEnd {
                    if j == lineEnd || bytes[j] == UInt8(ascii: ":") {
                        fields.append(Field(start: fieldStart, end: j))
                        fieldStart = j + 1
                    }
                    j += 1
                }
                body(fields)
            }
            i = lineEnd + 1
        }
    }

    /// A field that is a decimal UInt32 (an optional `+`, then digits), as `UInt32(String)`
    /// reads it; nil otherwise.
    static func number(_ bytes: [UInt8], _ f: Field) -> UInt32? {
        var i = f.start
        if i < f.end && bytes[i] == UInt8(ascii: "+") { i += 1 }
        guard i < f.end else { return nil }
        var value: UInt64 = 0
        while i < f.end {
            let digit = bytes[i] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + UInt64(digit)
            guard value <= UInt64(UInt32.max) else { return nil }
            i += 1
        }
        return UInt32(value)
    }

    static func text(_ bytes: [UInt8], _ f: Field) -> String {
        String(decoding: bytes[f.start..<f.end], as: UTF8.self)
    }

    /// Parses `START-END` (the CLI's `--uid-range`).
    public static func parse(_ text: String) -> ClosedRange<UInt32>? {
        let parts = text.split(separator: "-")
        guard parts.count == 2, let a = UInt32(parts[0]), let b = UInt32(parts[1]), a >= 1000, a <= b else { return nil }
        return a...b
    }
}
