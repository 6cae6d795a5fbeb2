import AppexSystem
import CAppexLinux
import SystemPackage

/// A failed operation of the sandbox or of the state directory: what was being done, on
/// what, and the errno.
public struct SandboxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var path: String?
    public var errno: Errno?
    public var message: String?

    public init(_ operation: String, path: String? = nil, errno: Errno? = nil, message: String? = nil) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.message = message
    }

    public var description: String {
        var s = operation
        if let errno { s += ": \(Errno.symbol(errno.rawValue)) (\(errno.description))" }
        if let message { s += (errno == nil ? ": " : "; ") + message }
        if let path { s += " [\(path)]" }
        return s
    }
}

extension SandboxError: SystemCallFailure {
    package init(systemCall operation: String, path: String?, errno: Errno?, message: String?) {
        self.init(operation, path: path, errno: errno, message: message)
    }
}

extension Errno {
    /// The symbolic name (`EACCES`) for messages people search for.
    package static func symbol(_ value: Int32) -> String {
        let names: [Int32: String] = [
            1: "EPERM", 2: "ENOENT", 3: "ESRCH", 4: "EINTR", 5: "EIO", 7: "E2BIG", 8: "ENOEXEC", 9: "EBADF",
            11: "EAGAIN", 12: "ENOMEM", 13: "EACCES", 14: "EFAULT", 16: "EBUSY", 17: "EEXIST",
            18: "EXDEV", 19: "ENODEV", 20: "ENOTDIR", 21: "EISDIR", 22: "EINVAL", 24: "EMFILE",
            26: "ETXTBSY", 28: "ENOSPC", 30: "EROFS", 36: "ENAMETOOLONG", 38: "ENOSYS", 40: "ELOOP",
            71: "EPROTO", 95: "EOPNOTSUPP", 97: "EAFNOSUPPORT", 126: "ENOKEY",
        ]
        return names[value] ?? "errno \(value)"
    }
}
