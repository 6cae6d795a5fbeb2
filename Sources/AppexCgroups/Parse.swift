/// Parsers for cgroupfs file formats. Pure functions, so the fake-tree tests pin them down.
public enum CgroupParse {
    /// v1 reports "unlimited" as PAGE_COUNTER_MAX pages in bytes, close to Int64.max.
    /// Anything this large is unlimited.
    static let v1Unlimited: Int64 = 1 << 62

    /// `"max"` → nil; a decimal number → its value. v2 `memory.max`, `memory.high`, `pids.max`.
    public static func limit(_ text: String, path: String = "") throws -> Int64? {
        let t = text.trimmingWhitespace
        if t == "max" { return nil }
        guard let v = Int64(t) else { throw CgroupError("parse", path: path, message: "expected a number or \"max\", got \"\(t)\"") }
        // v1 spells "unlimited" as a huge number.
        return v >= v1Unlimited ? nil : v
    }

    /// A single decimal number (`memory.current`, `memory.usage_in_bytes`, `memory.peak`).
    public static func number(_ text: String, path: String = "") throws -> Int64 {
        let t = text.trimmingWhitespace
        guard let v = Int64(t) else { throw CgroupError("parse", path: path, message: "expected a number, got \"\(t)\"") }
        return v
    }

    /// Flat keyed files: one `key value` per line (`memory.stat`, `memory.events`,
    /// v1 `memory.oom_control`). Lines that do not parse are skipped: the kernel adds keys over time.
    /// Split as bytes, like every parser here: cgroupfs text is ASCII, and splitting a
    /// String by Character runs grapheme breaking over it (several of these files are read
    /// on every `appex run`).
    public static func keyed(_ text: String) -> [String: Int64] {
        var out: [String: Int64] = [:]
        for line in text.utf8.split(separator: UInt8(ascii: "\n")) {
            let parts = line.split(separator: UInt8(ascii: " "))
            guard parts.count == 2, let v = Int64(String(decoding: parts[1], as: UTF8.self)) else { continue }
            out[String(decoding: parts[0], as: UTF8.self)] = v
        }
        return out
    }

    /// `cgroup.procs`: one pid per line.
    public static func pids(_ text: String) -> [Int32] {
        text.utf8.split(separator: UInt8(ascii: "\n")).compactMap { Int32(String(decoding: $0, as: UTF8.self).trimmingWhitespace) }
    }

    /// `cgroup.controllers` / `cgroup.subtree_control`: space separated names.
    public static func controllers(_ text: String) -> Set<String> {
        Set(text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))
    }

    /// A limit as cgroupfs v2 wants it written.
    static func v2Value(_ v: Int64?) -> String { v.map(String.init) ?? "max" }
    static func v2Value(_ v: Int?) -> String { v.map(String.init) ?? "max" }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        let bytes = Substring(self).utf8
        func blank(_ b: UInt8) -> Bool { b == UInt8(ascii: " ") || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !blank($0) }) else { return "" }
        let last = bytes.lastIndex(where: { !blank($0) })!
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
