#if canImport(Glibc)
import Glibc
#endif

/// The errors the SDK itself answers requests with, in domain `dev.appex.extensionkit`, when
/// the handler could not: a host sees them in the request's outcome like any other cancel.
public enum ExtensionKitError {
    public static let domain = "dev.appex.extensionkit"

    public enum Code: Int64, Sendable {
        /// appexd asked the process to terminate and the request was still open when the
        /// grace period ran out.
        case terminated = 1
        /// The handler's returned items could not be sent (too large for a frame, or the
        /// descriptors given do not match the attachments).
        case invalidReply = 2
    }

    static func error(_ code: Code, _ message: String) -> RequestError {
        RequestError(domain: domain, code: code.rawValue, message: message)
    }
}

/// Why an attachment's bytes could not be read.
public enum AttachmentError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The attachment names a descriptor this request did not bring (an attachment of
    /// another request, or one built by hand).
    case noSuchDescriptor(index: Int, received: Int)
    /// The request has been answered: its descriptors are closed.
    case requestAnswered(requestID: UInt64)
    /// A system call on the descriptor failed.
    case readFailed(index: Int, operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .noSuchDescriptor(let index, let received):
            "attachment refers to descriptor \(index), but the request brought \(received)"
        case .requestAnswered(let id):
            "request \(id) has been answered; its attachments' descriptors are closed"
        case .readFailed(let index, let operation, let errno):
            "\(operation) on the descriptor of attachment \(index) failed: \(SystemError.text(errno)) (errno \(errno))"
        }
    }

    var errno: Int32 {
        if case .readFailed(_, _, let errno) = self { return errno }
        return EIO
    }
}

enum SystemError {
    static func text(_ errno: Int32) -> String { String(cString: strerror(errno)) }
}
