import AppexWire
import AppexWireIO

/// Why a call on a `HostClient` failed. Every error the client throws is one of these; `kind`
/// says what happened, `reason` carries appexd's reason token when appexd said no.
public struct HostClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// appexd refused the connection: its answer to Hello (`not-authorized`,
        /// `version-mismatch`), or a connection-level Refusal later (e.g. `protocol-error`).
        case connectionRefused
        /// appexd refused this request or admin operation (`unknown-extension`, `disabled`,
        /// `not-activated`, `busy`, `not-authorized`, `invalid-bundle`, ...); `details` holds
        /// further lines, e.g. a bundle's validation findings.
        case refused
        /// The connection ended before the answer came: appexd closed it, the socket failed,
        /// or this client was closed.
        case connectionLost
        /// The control socket could not be opened or written (no appexd listening, EACCES, ...).
        case socket
        /// appexd sent something the protocol forbids; the client told it so and closed.
        case protocolError
        /// The call could not be sent as asked (64 requests already in flight, descriptors that
        /// do not match the attachments, a limit of the wire format); nothing was sent.
        case invalidRequest
    }

    public var kind: Kind
    /// appexd's reason token, when it refused (or the reason the client refused appexd with).
    public var reason: Reason?
    public var message: String
    /// Further lines of a Refusal.
    public var details: [String]
    /// The request or admin operation this error ends, when it is about one.
    public var requestID: UInt64?
    /// The failed system call, for `.socket` and socket-level `.connectionLost` errors.
    public var socketError: SocketError?

    public init(
        _ kind: Kind, reason: Reason? = nil, message: String, details: [String] = [],
        requestID: UInt64? = nil, socketError: SocketError? = nil
    ) {
        self.kind = kind
        self.reason = reason
        self.message = message
        self.details = details
        self.requestID = requestID
        self.socketError = socketError
    }

    /// A Refusal from appexd, of the connection (no request id) or of one request.
    init(refusal: Refusal) {
        let what = refusal.requestID == nil ? "appexd refused the connection" : "appexd refused the request"
        self.init(
            refusal.requestID == nil ? .connectionRefused : .refused,
            reason: refusal.reason,
            message: refusal.message.map { "\(what): \($0)" } ?? what,
            details: refusal.details,
            requestID: refusal.requestID)
    }

    public var description: String {
        var text = message
        if let reason { text += " [\(reason)]" }
        for line in details { text += "\n  \(line)" }
        return text
    }
}
