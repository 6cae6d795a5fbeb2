#if canImport(Glibc)
import Glibc
#endif

/// A line to standard error with write(2): no stdio `FILE` (a shared mutable global) and no
/// Foundation `FileHandle`.
public enum StandardError {
    public static func line(_ text: String) {
        var bytes = Array((text + "\n").utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            done += n
        }
    }
}
