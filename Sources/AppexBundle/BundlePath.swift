#if canImport(Glibc)
import Glibc
#endif

/// The few path operations bundle loading needs, without Foundation's `NSString` (which
/// `appex run` does not link).
public enum BundlePath {
    /// `directory/name`, one slash between.
    public static func join(_ directory: String, _ name: String) -> String {
        if directory.isEmpty { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// A bundle path as `NSString.standardizingPath` gives it: a leading `~` expanded; an
    /// absolute path with `.`, `..`, repeated slashes and symbolic links resolved when it
    /// exists (else lexically); a relative one only without trailing slashes and `/.`.
    public static func standardized(_ path: String) -> String {
        var p = path
        if p == "~" || p.hasPrefix("~/"), let home = getenv("HOME") {
            p = String(cString: home) + p.dropFirst()
        }
        guard p.hasPrefix("/") else {
            while p.count > 1, p.hasSuffix("/") || p.hasSuffix("/.") { p.removeLast(p.hasSuffix("/") ? 1 : 2) }
            return p
        }
        if let resolved = realpath(p, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        var parts: [Substring] = []
        for part in p.split(separator: "/") where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// The names in a directory (not `.` or `..`), unsorted; empty when it cannot be read.
    public static func entries(of directory: String) -> [String] {
        (directoryNames(directory) ?? []).filter { $0 != "." && $0 != ".." }
    }

    /// What `stat` (following links, as `FileManager.fileExists` does) says is there.
    public static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
    }

    public static func exists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0
    }
}
