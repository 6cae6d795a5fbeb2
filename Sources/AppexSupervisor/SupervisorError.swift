#if canImport(Glibc)
import Glibc
#endif

/// A failure of the supervisor's own machinery (not of an extension), with what it was doing.
public struct SupervisorError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var message: String

    public init(_ operation: String, _ message: String) {
        self.operation = operation
        self.message = message
    }

    /// The calling thread's errno, named.
    static func errno(_ operation: String) -> SupervisorError {
        let e = Glibc.errno
        return SupervisorError(operation, String(cString: strerror(e)) + " (errno \(e))")
    }

    public var description: String { "\(operation): \(message)" }
}
