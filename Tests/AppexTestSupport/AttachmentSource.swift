import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Descriptors for attachments, close-on-exec from birth so that a child another test spawns
/// at the same moment cannot inherit them (pipe(2) would leave a window).
public enum AttachmentSource {
    /// A stream whose reader sees `bytes` and then end-of-file; returns the reading end.
    public static func stream(_ bytes: [UInt8]) throws -> Int32 {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw ExtensionProcess.Failure("socketpair: errno \(errno)")
        }
        defer { close(fds[1]) }
        guard write(fds[1], bytes, bytes.count) == bytes.count else {
            close(fds[0])
            throw ExtensionProcess.Failure("write: errno \(errno)")
        }
        return fds[0]
    }

    /// An unlinked regular file holding `bytes`, positioned at its start: closing the
    /// descriptor removes it.
    public static func file(_ bytes: [UInt8]) throws -> Int32 {
        let path = NSTemporaryDirectory() + "appex-attachment-\(getpid())-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ExtensionProcess.Failure("open \(path): errno \(errno)") }
        unlink(path)
        guard write(fd, bytes, bytes.count) == bytes.count, lseek(fd, 0, SEEK_SET) == 0 else {
            close(fd)
            throw ExtensionProcess.Failure("write \(path): errno \(errno)")
        }
        return fd
    }
}
