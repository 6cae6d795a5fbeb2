/// The order of messages on one connection, from one end's point of view. The owner calls
/// `willSend` before sending a message and `didReceive` after decoding one; each throws a
/// WireError (kind and the message's name) for a message that is not allowed now, and the
/// owner closes the connection. Memory is bounded: at most `WireLimits.requestsInFlight`
/// requests, a few open-URLs each, and a few pings are remembered.
///
/// Rules (Docs/protocol.md, "Sequences"):
/// - The extension or host sends Hello first; appexd answers Hello, or Refusal and closes.
///   Nothing else travels until both Hellos have. A second Hello is out of order.
/// - Request ids are chosen by appexd on the extension channel and by the host on the control
///   channel, and increase strictly on a connection.
/// - Every request is answered exactly once: CompleteRequest or CancelRequest from the
///   extension; RequestOutcome or Refusal (with the id) from appexd to a host; AdminResult or
///   Refusal for admin operations.
/// - A message about a request that was begun and has ended is *stale* when its sender could not
///   have known (cancel, will-expire, open-URL result crossing the answer): it is accepted and
///   should be ignored. A message about a request never begun is an error.
/// - A Refusal without a request id ends the connection: nothing may follow it.
public struct ConnectionState: Sendable {
    public enum Disposition: Sendable, Equatable {
        /// Act on the message.
        case deliver
        /// The message refers to a request that has already ended; drop it.
        case stale
    }

    private enum RequestKind: Sendable { case request, admin }

    private struct Pending: Sendable {
        var kind: RequestKind
        var openURLs = 0
        var schedules = 0
    }

    public let role: ConnectionRole
    public private(set) var sentHello = false
    public private(set) var receivedHello = false
    /// Set once a Terminate has been sent or received: no new requests begin.
    public private(set) var terminating = false
    /// Set once a connection-level Refusal has been sent or received.
    public private(set) var refused = false
    /// The protocol version the peer announced.
    public private(set) var peerVersion: UInt32?

    private var inFlight: [UInt64: Pending] = [:]
    private var highestRequestID: UInt64 = 0
    private var pingsSent: Set<UInt64> = []
    private var pingsReceived: Set<UInt64> = []

    public init(role: ConnectionRole) { self.role = role }

    public var isOpen: Bool { sentHello && receivedHello && !refused }
    public var requestsInFlight: Int { inFlight.count }
    public func isInFlight(_ requestID: UInt64) -> Bool { inFlight[requestID] != nil }

    @discardableResult
    public mutating func willSend(_ message: Message) throws(WireError) -> Disposition {
        try apply(message, from: role)
    }

    @discardableResult
    public mutating func didReceive(_ message: Message) throws(WireError) -> Disposition {
        try apply(message, from: role.peer)
    }

    // Both directions go through one function: the rules are about who sends, so a message is
    // checked the same way by its sender and its receiver and the two states stay mirror images.
    private mutating func apply(_ message: Message, from sender: ConnectionRole) throws(WireError) -> Disposition {
        let type = message.type
        let outgoing = sender == role
        func fail(_ kind: WireError.Kind, _ detail: String) -> WireError {
            WireError(kind, field: type.name, detail)
        }

        guard sender.maySend(type) else {
            throw fail(.wrongSender, "\(type.name) is not sent by the \(sender.name)")
        }
        if refused {
            throw fail(.outOfOrder, "the connection was refused; nothing may follow a Refusal")
        }

        // Check-in.
        let senderHelloDone = outgoing ? sentHello : receivedHello
        let otherHelloDone = outgoing ? receivedHello : sentHello
        if type == .hello {
            if senderHelloDone { throw fail(.outOfOrder, "a second Hello") }
            if sender.isAppexd && !otherHelloDone {
                throw fail(.outOfOrder, "appexd answers a Hello; it does not speak first")
            }
            guard case .hello(let hello) = message else { return .deliver }
            if !outgoing {
                if hello.protocolVersion != WireProtocol.version {
                    throw fail(
                        .versionMismatch,
                        "peer speaks protocol version \(hello.protocolVersion), this side speaks \(WireProtocol.version)")
                }
                peerVersion = hello.protocolVersion
                receivedHello = true
            } else {
                sentHello = true
            }
            return .deliver
        }
        if type == .refusal, case .refusal(let r) = message, r.requestID == nil {
            // Connection-level: appexd may refuse at any time, even instead of its Hello; the
            // extension's or host's first message is always its Hello.
            if !sender.isAppexd && !senderHelloDone {
                throw fail(.outOfOrder, "the \(sender.name)'s first message must be Hello")
            }
            refused = true
            return .deliver
        }
        if !senderHelloDone {
            throw fail(.outOfOrder, "\(type.name) before the \(sender.name)'s Hello")
        }
        if !otherHelloDone {
            throw fail(.outOfOrder, "\(type.name) before the Hello of the \(sender.peer.name)")
        }

        switch message {
        case .hello, .memoryWarning, .cancelSession:
            return .deliver
        case .terminate:
            terminating = true
            return .deliver
        case .ping(let seq):
            return try track(ping: seq, outgoing: outgoing, fail)
        case .pong(let seq):
            var answered = outgoing ? pingsReceived : pingsSent
            guard answered.remove(seq) != nil else {
                throw fail(.unsolicited, "pong \(seq) answers no outstanding ping")
            }
            if outgoing { pingsReceived = answered } else { pingsSent = answered }
            return .deliver

        case .beginRequest(let m):
            return try begin(m.requestID, .request, fail)
        case .transferEvents(let m):
            // To a host it names no request; on the extension channel it begins one.
            if role.channel == .control { return .deliver }
            return try begin(m.requestID, .request, fail)
        case .hostBeginRequest(let m):
            return try begin(m.requestID, .request, fail)
        case .admin(let m):
            return try begin(m.requestID, .admin, fail)

        case .completeRequest(let m):
            return try answer(m.requestID, .request, fail)
        case .cancelRequest(let m):
            // From the extension it answers; from appexd it asks (and may cross the answer).
            if sender == .extension { return try answer(m.requestID, .request, fail) }
            return try refer(m.requestID, .request, staleAllowed: true, fail)
        case .requestOutcome(let m):
            return try answer(m.requestID, .request, fail)
        case .adminResult(let m):
            return try answer(m.requestID, .admin, fail)
        case .refusal(let m):
            if sender != .service {
                throw fail(.wrongSender, "only appexd refuses a request; the \(sender.name) may refuse only the connection")
            }
            return try answer(m.requestID!, nil, fail)

        case .hostCancelRequest(let m):
            return try refer(m.requestID, .request, staleAllowed: true, fail)
        case .requestWillExpire(let m):
            return try refer(m.requestID, .request, staleAllowed: true, fail)
        case .interruption(let m):
            return try refer(m.requestID, .request, staleAllowed: false, fail)
        case .openURL(let m):
            let d = try refer(m.requestID, .request, staleAllowed: false, fail)
            if inFlight[m.requestID]!.openURLs >= WireLimits.openURLsPerRequest {
                throw fail(.tooManyInFlight, "more than \(WireLimits.openURLsPerRequest) open-URLs awaiting a result for request \(m.requestID)")
            }
            inFlight[m.requestID]!.openURLs += 1
            return d
        case .scheduleTransfer(let m):
            let d = try refer(m.requestID, .request, staleAllowed: false, fail)
            if inFlight[m.requestID]!.schedules >= WireLimits.schedulesPerRequest {
                throw fail(.tooManyInFlight, "more than \(WireLimits.schedulesPerRequest) transfers awaiting an answer for request \(m.requestID)")
            }
            inFlight[m.requestID]!.schedules += 1
            return d
        case .transferScheduled(let m):
            // May cross the request's answer, as an open-URL result may.
            let d = try refer(m.requestID, .request, staleAllowed: true, fail)
            if d == .stale { return d }
            if inFlight[m.requestID]!.schedules == 0 {
                throw fail(.unsolicited, "no ScheduleTransfer of request \(m.requestID) awaits an answer")
            }
            inFlight[m.requestID]!.schedules -= 1
            return d
        case .openURLResult(let m):
            let d = try refer(m.requestID, .request, staleAllowed: true, fail)
            if d == .stale { return d }
            if inFlight[m.requestID]!.openURLs == 0 {
                throw fail(.unsolicited, "no OpenURL of request \(m.requestID) awaits a result")
            }
            inFlight[m.requestID]!.openURLs -= 1
            return d
        }
    }

    private mutating func track(ping seq: UInt64, outgoing: Bool, _ fail: (WireError.Kind, String) -> WireError) throws(WireError) -> Disposition {
        if outgoing {
            if pingsSent.count >= WireLimits.pingsOutstanding {
                throw fail(.tooManyInFlight, "\(pingsSent.count) pings already await their pong")
            }
            guard pingsSent.insert(seq).inserted else { throw fail(.invalidValue, "ping \(seq) is already outstanding") }
        } else {
            if pingsReceived.count >= WireLimits.pingsOutstanding {
                throw fail(.tooManyInFlight, "\(pingsReceived.count) pings already await their pong")
            }
            guard pingsReceived.insert(seq).inserted else { throw fail(.invalidValue, "ping \(seq) is already outstanding") }
        }
        return .deliver
    }

    private mutating func begin(_ id: UInt64, _ kind: RequestKind, _ fail: (WireError.Kind, String) -> WireError) throws(WireError) -> Disposition {
        if terminating { throw fail(.outOfOrder, "no request may begin after Terminate") }
        if id <= highestRequestID {
            throw fail(.requestIDNotIncreasing, "request id \(id) after \(highestRequestID); ids increase strictly and start above 0")
        }
        if inFlight.count >= WireLimits.requestsInFlight {
            throw fail(.tooManyInFlight, "\(inFlight.count) requests already in flight, at most \(WireLimits.requestsInFlight)")
        }
        highestRequestID = id
        inFlight[id] = Pending(kind: kind)
        return .deliver
    }

    /// The answer that ends request `id`. `kind` nil: either kind (a Refusal).
    private mutating func answer(_ id: UInt64, _ kind: RequestKind?, _ fail: (WireError.Kind, String) -> WireError) throws(WireError) -> Disposition {
        guard let pending = inFlight[id] else {
            throw fail(
                .unknownRequest,
                id <= highestRequestID && id > 0
                    ? "request \(id) was already answered"
                    : "request \(id) was never begun")
        }
        if let kind, pending.kind != kind {
            throw fail(
                .unknownRequest, "request \(id) is \(pending.kind == .admin ? "an admin operation" : "a request"), not answered by this message")
        }
        inFlight[id] = nil
        return .deliver
    }

    /// A message about request `id` that does not end it.
    private func refer(_ id: UInt64, _ kind: RequestKind, staleAllowed: Bool, _ fail: (WireError.Kind, String) -> WireError) throws(WireError)
        -> Disposition
    {
        if let pending = inFlight[id] {
            if pending.kind != kind { throw fail(.unknownRequest, "request \(id) is an admin operation") }
            return .deliver
        }
        if id > 0 && id <= highestRequestID {
            if staleAllowed { return .stale }
            throw fail(.unknownRequest, "request \(id) has already ended")
        }
        throw fail(.unknownRequest, "request \(id) was never begun")
    }
}
