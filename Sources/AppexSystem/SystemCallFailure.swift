import SystemPackage

/// An error a module reports a failed system call as: `SystemCalls<Failure>` makes one from
/// the operation, the path it concerned (if any), the errno and, for a failure the kernel
/// reports no errno for (a short write to a control file), a message.
package protocol SystemCallFailure: Error {
    init(systemCall operation: String, path: String?, errno: Errno?, message: String?)
}

/// The plain one, for code with no error vocabulary of its own: "open /proc/stat: ENOENT".
package struct SystemCallError: SystemCallFailure, Equatable, CustomStringConvertible {
    package var operation: String
    package var path: String?
    package var errno: Errno?
    package var message: String?

    package init(systemCall operation: String, path: String?, errno: Errno?, message: String?) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.message = message
    }

    package var description: String {
        var s = operation
        if let path { s += " \(path)" }
        if let errno { s += ": \(errno)" }
        if let message { s += ": \(message)" }
        return s
    }
}
