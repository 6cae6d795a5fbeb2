// Messages between appexd and an extension, over the socketpair at fd 3.

/// appexd -> extension: a request with its input items. Request ids increase strictly on a
/// connection; every BeginRequest is answered exactly once, by CompleteRequest or CancelRequest.
public struct BeginRequest: Equatable, Sendable {
    public var requestID: UInt64
    public var items: [ExtensionItem]

    public init(requestID: UInt64, items: [ExtensionItem]) {
        self.requestID = requestID
        self.items = items
    }
}

/// extension -> appexd: the request is done; these are the returned items.
public struct CompleteRequest: Equatable, Sendable {
    public var requestID: UInt64
    public var items: [ExtensionItem]

    public init(requestID: UInt64, items: [ExtensionItem] = []) {
        self.requestID = requestID
        self.items = items
    }
}

/// extension -> appexd: the request failed with this error (answers the request).
/// appexd -> extension: the host cancelled; the extension still answers the request once.
public struct CancelRequest: Equatable, Sendable {
    public var requestID: UInt64
    public var error: RequestError

    public init(requestID: UInt64, error: RequestError) {
        self.requestID = requestID
        self.error = error
    }
}

/// extension -> appexd -> host: please open this URL. The host decides; the answer comes back
/// as OpenURLResult.
public struct OpenURL: Equatable, Sendable {
    public var requestID: UInt64
    public var url: String

    public init(requestID: UInt64, url: String) {
        self.requestID = requestID
        self.url = url
    }
}

/// host -> appexd -> extension: whether the host opened the URL.
public struct OpenURLResult: Equatable, Sendable {
    public var requestID: UInt64
    public var accepted: Bool

    public init(requestID: UInt64, accepted: Bool) {
        self.requestID = requestID
        self.accepted = accepted
    }
}

/// appexd -> extension: memory is short; free what you can before the kills start.
public struct MemoryWarning: Equatable, Sendable {
    public enum Level: UInt8, Sendable, CaseIterable {
        case warning = 1
        case critical = 2
    }

    public var level: Level

    public init(level: Level) { self.level = level }
}

/// appexd -> extension: this request's time is nearly up; after `millisecondsLeft` the extension
/// is killed with `request-timeout`. (Milliseconds rather than seconds: deadlines are short.)
public struct RequestWillExpire: Equatable, Sendable {
    public var requestID: UInt64
    public var millisecondsLeft: UInt32

    public init(requestID: UInt64, millisecondsLeft: UInt32) {
        self.requestID = requestID
        self.millisecondsLeft = millisecondsLeft
    }
}

/// appexd -> extension: finish in-flight requests and exit; after the grace period (when
/// given) the extension is killed.
public struct Terminate: Equatable, Sendable {
    public var reason: Reason
    public var graceMilliseconds: UInt32?

    public init(reason: Reason, graceMilliseconds: UInt32? = nil) {
        self.reason = reason
        self.graceMilliseconds = graceMilliseconds
    }
}
