// Messages used on both channels: check-in, refusal, liveness.

/// The first message in each direction. The extension or host sends it first; appexd answers
/// with its own Hello, or with a Refusal and closes.
public struct Hello: Equatable, Sendable {
    public var protocolVersion: UInt32
    /// The extension's bundle identifier; a host's own identifier; "appexd" from appexd.
    public var bundleIdentifier: String
    /// The sender's pid as it sees itself (informational: appexd trusts SO_PEERCRED and its
    /// own records, not this).
    public var pid: Int32

    public init(protocolVersion: UInt32 = WireProtocol.version, bundleIdentifier: String, pid: Int32) {
        self.protocolVersion = protocolVersion
        self.bundleIdentifier = bundleIdentifier
        self.pid = pid
    }
}

/// "No": to a Hello (then the connection closes), to a host's request or admin operation that
/// was not accepted (`requestID` set; it ends that request), or before closing a connection
/// that broke the protocol (`protocol-error`).
public struct Refusal: Equatable, Sendable {
    public var reason: Reason
    public var message: String?
    public var requestID: UInt64?
    /// Further lines, e.g. the findings of a bundle that failed validation.
    public var details: [String]

    public init(reason: Reason, message: String? = nil, requestID: UInt64? = nil, details: [String] = []) {
        self.reason = reason
        self.message = message
        self.requestID = requestID
        self.details = details
    }
}
