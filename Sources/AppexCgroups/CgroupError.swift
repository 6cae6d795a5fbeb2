import AppexSystem
import SystemPackage

/// A failed cgroup operation: what was attempted, on which path, and why.
///
/// Like swift-system, failures of system calls carry the `Errno`; failures that
/// are not system calls (bad names, unparsable files) carry a message instead.
public struct CgroupError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var errno: Errno?
    public var message: String?

    public init(_ operation: String, path: String, errno: Errno? = nil, message: String? = nil) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.message = message
    }

    public var description: String {
        var s = "\(operation) \(path)"
        if let errno { s += ": \(errno)" }
        if let message { s += ": \(message)" }
        return s
    }
}

extension CgroupError: SystemCallFailure {
    package init(systemCall operation: String, path: String?, errno: Errno?, message: String?) {
        self.init(operation, path: path ?? "", errno: errno, message: message)
    }
}
