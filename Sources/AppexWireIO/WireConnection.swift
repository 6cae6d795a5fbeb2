import AppexWire
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A socket and the state machine of its role, kept in step: every message sent is checked
/// against the sequence rules first, every message received after decoding. A frame that
/// breaks the protocol (malformed, oversized, out of order) throws WireError with its
/// descriptors closed; the owner then calls `refuseAndClose` and logs the reason, and only this
/// connection ends.
///
/// Thread-safe: senders are serialised (so the order checked is the order sent); receive from
/// one thread at a time.
public final class WireConnection: @unchecked Sendable {
    public enum Event {
        case message(ReceivedFrame)
        /// A message about a request that has already ended (see ConnectionState); dropped.
        case stale(Message)
        case endOfStream
        case wouldBlock
    }

    public let socket: WireSocket
    private let state: Mutex<ConnectionState>
    /// Held for a whole send, so the order checked is the order sent.
    private let sendLock = Mutex(())

    public init(socket: WireSocket, role: ConnectionRole) {
        self.socket = socket
        self.state = Mutex(ConnectionState(role: role))
    }

    /// A snapshot of the sequence state.
    public var snapshot: ConnectionState { state.withLock { $0 } }

    private func withState<R>(_ body: (inout ConnectionState) throws(WireError) -> R) throws(WireError) -> R {
        try state.withLock { s throws(WireError) in try body(&s) }
    }

    /// Checks `message` against the sequence and sends it. A stale message (about a request
    /// that has ended) is not sent; the result says so.
    @discardableResult
    public func send(_ message: Message, descriptors: [Int32] = []) throws -> ConnectionState.Disposition {
        try ifDeliverable(message) { try socket.send(message, descriptors: descriptors) }
    }

    /// `send` of a message the caller has encoded already (`frame`, from `WireCodec.encode`
    /// of `message`): the state machine checks `message`, the socket carries `frame` as is.
    @discardableResult
    public func send(_ message: Message, encoded frame: [UInt8], descriptors: [Int32] = []) throws -> ConnectionState.Disposition {
        try ifDeliverable(message) { try socket.send(frame: frame, descriptors: descriptors) }
    }

    /// `send` that never blocks: false when the peer's socket buffer is full (the frame was
    /// not sent; a peer that stops reading is the caller's to deal with, e.g. kill). A stale
    /// message counts as handled (true). For an event loop that must not wait on one peer.
    public func sendWithoutBlocking(_ message: Message, descriptors: [Int32] = []) throws -> Bool {
        var sent = true
        try ifDeliverable(message) { sent = try socket.send(message, descriptors: descriptors, blocking: false) }
        return sent
    }

    /// Under the send lock: checks `message` against the sequence and, when it is to be
    /// delivered, runs `write`.
    private func ifDeliverable(_ message: Message, _ write: () throws -> Void) throws -> ConnectionState.Disposition {
        try sendLock.withLock { _ in
            let disposition = try withState { (s: inout ConnectionState) throws(WireError) in try s.willSend(message) }
            if disposition == .deliver { try write() }
            return disposition
        }
    }

    /// The next event. Throws WireError for a frame that breaks the protocol (its descriptors
    /// already closed) and SocketError when the socket fails.
    public func receive(blocking: Bool = true) throws -> Event {
        switch try socket.receive(blocking: blocking) {
        case .endOfStream: return .endOfStream
        case .wouldBlock: return .wouldBlock
        case .frame(let frame):
            let disposition: ConnectionState.Disposition
            do {
                disposition = try withState { (s: inout ConnectionState) throws(WireError) in try s.didReceive(frame.message) }
            } catch {
                frame.closeDescriptors()
                throw error
            }
            if disposition == .stale {
                frame.closeDescriptors()
                return .stale(frame.message)
            }
            return .message(frame)
        }
    }

    /// Tells the peer why the connection ends (best effort, never blocks) and closes it.
    public func refuseAndClose(_ reason: Reason, message: String) {
        let refusal = Message.refusal(Refusal(reason: reason, message: message))
        if let frame = try? WireCodec.encode(refusal) {
            _ = try? socket.send(frame: frame, blocking: false)
        }
        socket.close()
    }

    /// `refuseAndClose` for a frame that broke the protocol: `version-mismatch` or
    /// `protocol-error`, with the error's description as the message.
    public func refuseAndClose(for error: WireError) {
        refuseAndClose(error.refusalReason, message: error.description)
    }

    public func close() { socket.close() }
}
