/// What the seccomp filter does with a denied system call.
public enum SyscallAction: Sendable, Hashable, CustomStringConvertible {
    /// Fail with this errno: the "API unavailable" answer (EPERM by default).
    case errno(Int32)
    /// Kill the whole process (SIGSYS); reported as `seccomp-violation`.
    case kill
    /// Allow, but have the kernel log it: for trying a policy before enforcing it.
    case log
    /// Ask the supervisor, which records the call by name and answers with this errno.
    case notify(errno: Int32)

    /// Which of two actions on one syscall wins when two groups name it: the stricter.
    var strictness: Int {
        switch self {
        case .log: 0
        case .notify: 1
        case .errno: 2
        case .kill: 3
        }
    }

    public var name: String {
        switch self {
        case .errno: "errno"
        case .kill: "kill"
        case .log: "log"
        case .notify: "notify"
        }
    }

    public var errnoValue: Int32? {
        switch self {
        case .errno(let e), .notify(let e): e
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .errno(let e): "errno(\(ErrnoNames.name(e) ?? String(e)))"
        case .notify(let e): "notify(\(ErrnoNames.name(e) ?? String(e)))"
        default: name
        }
    }
}

/// The errno names a policy may use for the errno and notify actions.
public enum ErrnoNames {
    static let table: [(String, Int32)] = [
        ("EPERM", 1), ("ENOENT", 2), ("EIO", 5), ("EBADF", 9), ("EAGAIN", 11), ("ENOMEM", 12),
        ("EACCES", 13), ("EFAULT", 14), ("EBUSY", 16), ("EEXIST", 17), ("ENODEV", 19), ("EINVAL", 22),
        ("ENOSPC", 28), ("EROFS", 30), ("ENOSYS", 38), ("EOPNOTSUPP", 95), ("EAFNOSUPPORT", 97),
    ]

    public static func value(_ name: String) -> Int32? { table.first { $0.0 == name }?.1 }
    public static func name(_ value: Int32) -> String? { table.first { $0.1 == value }?.0 }
    public static var allNames: [String] { table.map(\.0) }
}
