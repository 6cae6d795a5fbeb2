#if canImport(Glibc)
import Glibc
#endif

/// Appex hands out host uids and gids from its own range (`UIDAllocator`). An id that some
/// account or a user namespace's subordinate range already uses would let that account's
/// processes signal, trace or own an extension's files, so the range is checked against
/// `/etc/passwd`, `/etc/group`, `/etc/subuid` and `/etc/subgid` before the first allocation,
/// and an overlap is refused with the entry named.
public enum UIDRangeCheck {
    private static let checked = Protected<Set<String>>([])

    /// Throws when `range` overlaps an account or a subordinate range. Cached per process.
    public static func verify(_ range: ClosedRange<UInt32>, etc: String = "/etc") throws {
        let key = "\(etc):\(range.lowerBound)-\(range.upperBound)"
        if checked.withLock({ $0.contains(key) }) { return }
        if let conflict = conflicts(range, etc: etc).first {
            throw SandboxError("check uid range", path: conflict.file, errno: .fileExists,
                               message: "Appex's uid range \(range.lowerBound)-\(range.upperBound) overlaps \(conflict.what); choose a free range (appex run --uid-range START-END)")
        }
        checked.withLock { _ = $0.insert(key) }
    }

    public struct Conflict: Sendable, Equatable {
        public var file: String
        public var what: String
    }

    /// Every overlap found, in file order.
    public static func conflicts(_ range: ClosedRange<UInt32>, etc: String = "/etc") -> [Conflict] {
        var out: [Conflict] = []
        // name:x:uid:... (passwd), name:x:gid:... (group): the third field.
        for file in ["passwd", "group"] {
            for fields in lines(etc + "/" + file) where fields.count > 2 {
                if let id = UInt32(fields[2]), range.contains(id) {
                    out.append(Conflict(file: etc + "/" + file, what: "\(file == "passwd" ? "uid" : "gid") \(id) of \"\(fields[0])\" in \(etc)/\(file)"))
                }
            }
        }
        // name:start:count (subuid, subgid).
        for file in ["subuid", "subgid"] {
            for fields in lines(etc + "/" + file) where fields.count > 2 {
                guard let start = UInt32(fields[1]), let count = UInt32(fields[2]), count > 0 else { continue }
                let end = start &+ (count - 1) < start ? UInt32.max : start + (count - 1)
                if start <= range.upperBound && range.lowerBound <= end {
                    out.append(Conflict(file: etc + "/" + file, what: "the subordinate ids \(start)-\(end) of \"\(fields[0])\" in \(etc)/\(file)"))
                }
            }
        }
        return out
    }

    /// Colon-separated fields of each non-comment line; a missing file has none. Split as
    /// bytes, not Characters: this runs on every `appex run` (~0.2 ms the other way).
    static func lines(_ path: String) -> [[String]] {
        guard let bytes = try? Sys.readFile(path) else { return [] }
        return bytes.split(separator: UInt8(ascii: "\n")).compactMap { line in
            let t = line.drop { $0 == UInt8(ascii: " ") }
            if t.isEmpty || t.first == UInt8(ascii: "#") { return nil }
            return t.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
                .map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Parses `START-END` (the CLI's `--uid-range`).
    public static func parse(_ text: String) -> ClosedRange<UInt32>? {
        let parts = text.split(separator: "-")
        guard parts.count == 2, let a = UInt32(parts[0]), let b = UInt32(parts[1]), a >= 1000, a <= b else { return nil }
        return a...b
    }
}
