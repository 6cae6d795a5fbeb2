#if canImport(Glibc)
import Glibc
#endif

/// A failure of the supervisor's own machinery (not of an extension), with what it was doing.
public struct SupervisorError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var message: String
    /// Another supervisor holds what this one needs (its socket, state directory or cgroup
    /// parent): appexd exits EX_TEMPFAIL for it, as it may be free later.
    public var isInUse = false

    public init(_ operation: String, _ message: String) {
        self.operation = operation
        self.message = message
    }

    static func inUse(_ operation: String, _ message: String) -> SupervisorError {
        var error = SupervisorError(operation, message)
        error.isInUse = true
        return error
    }

    /// The calling thread's errno, named.
    static func errno(_ operation: String) -> SupervisorError {
        let e = Glibc.errno
        return SupervisorError(operation, String(cString: strerror(e)) + " (errno \(e))")
    }

    public var description: String { "\(operation): \(message)" }
}
