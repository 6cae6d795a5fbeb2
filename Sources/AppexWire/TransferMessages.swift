// Background transfers (Docs/transfers.md): an extension hands appexd a download or an upload
// under a session identifier, and is later given the session's results in a request of its own.

/// What a background transfer moves.
public enum TransferKind: UInt8, Sendable, CaseIterable {
    /// URL -> a new file in an app-group container.
    case download = 1
    /// A file in an app-group container -> URL.
    case upload = 2

    public var name: String { self == .download ? "download" : "upload" }
}

/// What to transfer (the SDK calls it BackgroundTransfer).
public struct TransferRequest: Equatable, Sendable {
    public var kind: TransferKind
    public var url: String
    /// The app group whose container holds the file (sharedContainerIdentifier).
    public var appGroup: String
    /// A plain name inside the container: no `/`, not `.` or `..`.
    public var fileName: String
    /// The upload's HTTP method; default PUT for uploads, GET for downloads.
    public var method: String?
    /// `Name: value` lines.
    public var headers: [String]

    public init(kind: TransferKind, url: String, appGroup: String, fileName: String, method: String? = nil, headers: [String] = []) {
        self.kind = kind
        self.url = url
        self.appGroup = appGroup
        self.fileName = fileName
        self.method = method
        self.headers = headers
    }
}

/// extension -> appexd, during a request: carry this transfer on after the extension exits.
/// Answered by TransferScheduled with the same request id and token.
public struct ScheduleTransfer: Equatable, Sendable {
    public var requestID: UInt64
    /// Chosen by the extension; TransferScheduled repeats it.
    public var token: UInt64
    /// The background session (NSURLSessionConfiguration's identifier).
    public var sessionIdentifier: String
    public var transfer: TransferRequest

    public init(requestID: UInt64, token: UInt64, sessionIdentifier: String, transfer: TransferRequest) {
        self.requestID = requestID
        self.token = token
        self.sessionIdentifier = sessionIdentifier
        self.transfer = transfer
    }
}

/// extension -> appexd: cancel every transfer of this session that is not over
/// (`URLSession.invalidateAndCancel()`); their results follow as for any other end.
public struct CancelSession: Equatable, Sendable {
    public var sessionIdentifier: String

    public init(sessionIdentifier: String) { self.sessionIdentifier = sessionIdentifier }
}

/// appexd -> extension: the transfer was taken (transferID set) or refused (reason set).
public struct TransferScheduled: Equatable, Sendable {
    public var requestID: UInt64
    public var token: UInt64
    public var transferID: UInt64?
    public var reason: Reason?
    public var message: String?

    public init(requestID: UInt64, token: UInt64, transferID: UInt64? = nil, reason: Reason? = nil, message: String? = nil) {
        self.requestID = requestID
        self.token = token
        self.transferID = transferID
        self.reason = reason
        self.message = message
    }
}

/// How one transfer of a session ended.
public struct TransferResult: Equatable, Sendable {
    public enum Outcome: UInt8, Sendable, CaseIterable {
        case completed = 1
        case failed = 2
        case cancelled = 3
    }

    public var transferID: UInt64
    public var kind: TransferKind
    public var fileName: String
    public var outcome: Outcome
    /// Why it failed or was cancelled, e.g. `transfer-quota`, `http-status`, `network`.
    public var reason: Reason?
    public var message: String?
    /// Bytes moved (the file's size for a download, the bytes sent for an upload).
    public var bytes: UInt64
    /// The server's last status, when one answered.
    public var httpStatus: UInt32?

    public init(
        transferID: UInt64, kind: TransferKind, fileName: String, outcome: Outcome, reason: Reason? = nil,
        message: String? = nil, bytes: UInt64 = 0, httpStatus: UInt32? = nil
    ) {
        self.transferID = transferID
        self.kind = kind
        self.fileName = fileName
        self.outcome = outcome
        self.reason = reason
        self.message = message
        self.bytes = bytes
        self.httpStatus = httpStatus
    }
}

/// appexd -> extension (a request, answered by CompleteRequest or CancelRequest as any other)
/// or appexd -> host: every transfer of a session has ended; these are the results
/// (application(_:handleEventsForBackgroundURLSession:completionHandler:)).
public struct TransferEvents: Equatable, Sendable {
    /// On the extension channel the request this begins; to a host, 0.
    public var requestID: UInt64
    public var sessionIdentifier: String
    /// The extension whose session it was (what a host is told; on the extension channel, its own).
    public var bundleIdentifier: String
    public var results: [TransferResult]

    public init(requestID: UInt64, sessionIdentifier: String, bundleIdentifier: String, results: [TransferResult]) {
        self.requestID = requestID
        self.sessionIdentifier = sessionIdentifier
        self.bundleIdentifier = bundleIdentifier
        self.results = results
    }
}
