#if canImport(Glibc)
import Glibc
#endif

/// The refresh count's file, kept open and written in place: one pwrite of a few bytes at
/// offset 0 per request. Replacing the file (write a temporary, rename it over) costs ext4 a
/// writeback each time (auto_da_alloc, on a rename that replaces a file); an in-place write of
/// a few bytes does not, and a kill still leaves the old count or the new (one write call,
/// which a signal does not split). The count only grows, so the text never gets shorter; it is
/// cut to length anyway should it have been.
final class CounterFile {
    let path: String
    private let fd: Int32
    /// Bytes the file holds after the last write (its size when opened).
    private var length: off_t

    /// A failed operation on the file: which, and the errno.
    struct Failure: Error, CustomStringConvertible {
        var operation: String
        var path: String
        var errno: Int32
        var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
    }

    init(path: String) throws(Failure) {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(operation: "open", path: path, errno: errno) }
        var info = stat()
        length = fstat(fd, &info) == 0 ? info.st_size : 0
    }

    deinit { close(fd) }

    /// Writes `bytes` as the whole content.
    func write(_ bytes: [UInt8]) throws(Failure) {
        let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard n == bytes.count else {
            throw Failure(operation: "write", path: path, errno: n < 0 ? errno : EIO)
        }
        if off_t(n) < length, ftruncate(fd, off_t(n)) != 0 {
            throw Failure(operation: "truncate", path: path, errno: errno)
        }
        length = off_t(n)
    }
}
