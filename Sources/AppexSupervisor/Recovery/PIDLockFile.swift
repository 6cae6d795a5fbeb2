import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on a file that names its holder: the pid is written into the file
/// once the lock is taken, so whoever is refused can say who holds it. The kernel drops the
/// lock when the holder dies, so a file left by a dead process never blocks anyone; the
/// file itself is never removed (removing a lock file lets two processes lock two files).
public final class PIDLockFile: Sendable {
    public let path: String
    private let fd: Int32

    /// The lock is held by another process: `pid` and its command name when it could be read.
    public struct Held: Error, CustomStringConvertible, Sendable {
        public var path: String
        public var pid: Int32?
        public var command: String?

        public var holder: String {
            guard let pid else { return "another process" }
            return "pid \(pid)" + (command.map { " (\($0))" } ?? "")
        }

        public var description: String { "\(path) is locked by \(holder)" }
    }

    /// Takes the lock or throws `Held`. The file must belong to this process's euid: a lock
    /// file someone else made could be held by them for ever.
    public init(path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw SupervisorError.errno("open \(path)") }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let error = SupervisorError.errno("fstat \(path)")
            close(fd)
            throw error
        }
        guard st.st_uid == geteuid(), st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw SupervisorError("lock \(path)", "not a regular file of uid \(geteuid()) (uid \(st.st_uid)); remove it")
        }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = errno
            if e == EINTR { continue }
            close(fd)
            if e == EWOULDBLOCK { throw Self.holder(of: path) }
            throw SupervisorError("lock \(path)", String(cString: strerror(e)))
        }
        let line = "\(getpid())\n"
        guard ftruncate(fd, 0) == 0, pwrite(fd, line, line.utf8.count, 0) == line.utf8.count else {
            let error = SupervisorError.errno("write \(path)")
            close(fd)
            throw error
        }
        self.path = path
        self.fd = fd
    }

    /// Who holds `path`, from the pid its holder wrote.
    static func holder(of path: String) -> Held {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        let command = pid.flatMap { try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8) }?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return Held(path: path, pid: pid, command: command)
    }

    deinit { close(fd) }
}
