import AppexStateDirectory

/// A line to standard error with write(2) (`Sys.writeAll`): no stdio `FILE` (a shared
/// mutable global) and no Foundation `FileHandle`.
public enum StandardError {
    public static func line(_ text: String) {
        try? Sys.writeAll(fd: 2, Array((text + "\n").utf8))
    }
}
