#if canImport(Glibc)
import Glibc
#endif

/// A failed socket call: which call, on what, and the errno. (Faults of the peer's bytes are
/// WireErrors, not these.)
public struct SocketError: Error, Equatable, Sendable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32
    /// The socket path or the purpose, when there is one.
    public var context: String?

    public init(_ operation: String, errno: Int32, context: String? = nil) {
        self.operation = operation
        self.errno = errno
        self.context = context
    }

    /// The error of the call that just failed.
    package static func last(_ operation: String, _ context: String? = nil) -> SocketError {
        SocketError(operation, errno: Glibc.errno, context: context)
    }

    public var description: String {
        var s = "\(operation): \(String(cString: strerror(errno))) (errno \(errno))"
        if let context { s += " [\(context)]" }
        return s
    }
}
