import AppexWire
import AppexWireIO
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The shared state of one control connection: the requests awaiting an answer and the reader
/// loop that answers them. `HostClient` is its public face; the reader thread keeps this
/// object (not the HostClient) alive, so dropping the last HostClient reference closes the
/// connection.
final class ClientCore: @unchecked Sendable {
    enum Waiter {
        case request(OneShot<ReceivedOutcome>)
        case admin(OneShot<AdminResult>)

        func fail(_ error: HostClientError) {
            switch self {
            case .request(let slot): slot.fulfill(.failure(error))
            case .admin(let slot): slot.fulfill(.failure(error))
            }
        }
    }

    let connection: WireConnection
    /// Runs the tasks that prefer it on the reader thread (HostClient.readerExecutor).
    let readerExecutor = ReaderExecutor()
    private let openURL: HostClient.OpenURLHandler
    private let interruptionSink: AsyncStream<Interruption>.Continuation
    private let transferEventSink: AsyncStream<TransferEvents>.Continuation

    private struct State {
        var nextRequestID: UInt64 = 1
        var waiters: [UInt64: Waiter] = [:]
        /// Set once the connection has ended: every later call fails with it.
        var ended: HostClientError?
        var closing = false
        /// The client was closed from the reader thread itself (by a task running there): the
        /// reader closes the descriptor once it stops reading, as nobody joins it.
        var closeWhenReaderEnds = false
        /// Per request, the last open-URL answer under way: appexd matches results to its
        /// open-URLs in order, so each answer waits for the one before it.
        var openURLTails: [UInt64: Task<Void, Never>] = [:]
    }

    private let state = Mutex(State())
    /// Held from choosing a request id until its message is on the wire, so ids reach appexd
    /// in increasing order however many tasks begin requests at once.
    private let beginLock = Mutex(())

    init(
        connection: WireConnection, openURL: @escaping HostClient.OpenURLHandler,
        interruptionSink: AsyncStream<Interruption>.Continuation,
        transferEventSink: AsyncStream<TransferEvents>.Continuation
    ) {
        self.connection = connection
        self.openURL = openURL
        self.interruptionSink = interruptionSink
        self.transferEventSink = transferEventSink
    }

    // MARK: calls from hosts' tasks

    /// Chooses the next request id, registers `waiter` under it and sends `make(id)` with
    /// `descriptors`. The waiter is in place before the message leaves, so the answer cannot
    /// overtake it.
    func begin(_ waiter: Waiter, descriptors: [Int32] = [], _ make: (UInt64) -> Message) throws(HostClientError) -> UInt64 {
        try beginLock.withLock { _ throws(HostClientError) -> UInt64 in
            let id = try state.withLock { s throws(HostClientError) -> UInt64 in
                if let ended = s.ended { throw ended }
                let id = s.nextRequestID
                s.nextRequestID += 1
                s.waiters[id] = waiter
                return id
            }
            do throws(HostClientError) {
                let message = make(id)
                let frame = try encode(message, descriptors: descriptors.count)
                try send(message, encoded: frame, descriptors: descriptors)
            } catch {
                _ = state.withLock { $0.waiters.removeValue(forKey: id) }
                throw error
            }
            return id
        }
    }

    /// HostCancelRequest for `id`. A request that has already ended is not an error (the cancel
    /// crossed its outcome); an id never begun is.
    func cancel(_ id: UInt64) throws(HostClientError) {
        let message = Message.hostCancelRequest(HostCancelRequest(requestID: id))
        try send(message, encoded: encode(message, descriptors: 0))
    }

    /// The message's frame. Refuses, before the state machine counts it as in flight, a
    /// message that cannot be encoded (a limit of the format) or whose attachments refer to
    /// another number of descriptors than given.
    private func encode(_ message: Message, descriptors: Int) throws(HostClientError) -> [UInt8] {
        let frame: [UInt8]
        do throws(WireError) {
            frame = try WireCodec.encode(message)
        } catch {
            throw HostClientError(.invalidRequest, message: "\(message.type.name) not sent: \(error)")
        }
        let referenced = (try? FrameHeader.decode(frame))?.descriptorCount ?? 0
        guard referenced == descriptors else {
            throw HostClientError(
                .invalidRequest, message: "\(message.type.name) not sent: its attachments refer to \(referenced) descriptors, \(descriptors) given")
        }
        return frame
    }

    private func send(_ message: Message, encoded frame: [UInt8], descriptors: [Int32] = []) throws(HostClientError) {
        do {
            try connection.send(message, encoded: frame, descriptors: descriptors)
        } catch let error as WireError {
            if let ended = state.withLock({ $0.ended }) { throw ended }
            throw HostClientError(.invalidRequest, message: "\(message.type.name) not sent: \(error)")
        } catch {
            if let ended = state.withLock({ $0.ended }) { throw ended }
            throw HostClientError(
                .connectionLost, message: "sending \(message.type.name) to appexd failed: \(error)",
                socketError: error as? SocketError)
        }
    }

    /// Ends the connection from this side: the reader wakes (end of stream), fails every
    /// waiter, and exits. The descriptor itself is closed by the owner after joining the reader,
    /// so its number cannot be reused while the reader still reads from it.
    func shutdown() {
        state.withLock { $0.closing = true }
        _ = Glibc.shutdown(connection.socket.fd, Int32(SHUT_RDWR))
    }

    /// `shutdown` from the reader thread: the descriptor is closed when the reader stops.
    func shutdownFromReader() {
        state.withLock { $0.closeWhenReaderEnds = true }
        shutdown()
    }

    // MARK: the reader thread

    /// Reads frames until the connection ends and hands each to whoever waits for it.
    func readUntilEnd() {
        readerExecutor.adoptCurrentThread()
        var end: HostClientError?
        while end == nil {
            do {
                switch try connection.receive() {
                case .message(let frame): readerExecutor.collectAndRun { end = dispatch(frame) }
                case .stale, .wouldBlock: continue
                case .endOfStream: end = endOfStream()
                }
            } catch let error as WireError {
                // appexd broke the protocol: tell it why (best effort, never blocking) and end.
                let refusal = Message.refusal(Refusal(reason: error.refusalReason, message: error.description))
                if let frame = try? WireCodec.encode(refusal) {
                    _ = try? connection.socket.send(frame: frame, blocking: false)
                }
                end = HostClientError(
                    .protocolError, reason: error.refusalReason,
                    message: "appexd sent a frame that breaks the protocol: \(error)")
            } catch {
                end =
                    state.withLock { $0.closing }
                    ? HostClientError(.connectionLost, message: "the host client was closed")
                    : HostClientError(
                        .connectionLost, message: "reading from appexd failed: \(error)",
                        socketError: error as? SocketError)
            }
        }
        // No sender may block on a connection nobody reads any more.
        _ = Glibc.shutdown(connection.socket.fd, Int32(SHUT_RDWR))
        let (failed, closeHere) = state.withLock { s -> ([Waiter], Bool) in
            s.ended = end
            defer { s.waiters = [:] }
            return (Array(s.waiters.values), s.closeWhenReaderEnds)
        }
        readerExecutor.collectAndRun {
            for waiter in failed { waiter.fail(end!) }
            interruptionSink.finish()
            transferEventSink.finish()
        }
        if closeHere || state.withLock({ $0.closeWhenReaderEnds }) { connection.close() }
    }

    private func endOfStream() -> HostClientError {
        state.withLock { $0.closing }
            ? HostClientError(.connectionLost, message: "the host client was closed")
            : HostClientError(.connectionLost, message: "appexd closed the connection")
    }

    private func takeWaiter(_ id: UInt64) -> Waiter? {
        state.withLock { s in
            s.openURLTails[id] = nil
            return s.waiters.removeValue(forKey: id)
        }
    }

    /// Acts on one message; returns the error that ends the connection, if it does.
    private func dispatch(_ frame: ReceivedFrame) -> HostClientError? {
        switch frame.message {
        case .requestOutcome(let outcome):
            let received = ReceivedOutcome(message: outcome, descriptors: frame.descriptors)
            if case .request(let slot)? = takeWaiter(outcome.requestID) {
                slot.fulfill(.success(received))
            } else {
                received.closeDescriptors()
            }
        case .adminResult(let result):
            if case .admin(let slot)? = takeWaiter(result.requestID) {
                slot.fulfill(.success(result))
            }
        case .refusal(let refusal):
            guard let id = refusal.requestID else { return HostClientError(refusal: refusal) }
            takeWaiter(id)?.fail(HostClientError(refusal: refusal))
        case .interruption(let interruption):
            interruptionSink.yield(interruption)
        case .transferEvents(let events):
            transferEventSink.yield(events)
        case .openURL(let request):
            answer(request)
        case .ping(let sequence):
            // A failure shows up as the next receive's end of stream.
            _ = try? connection.send(.pong(sequence: sequence))
        default:
            // The host role's state machine lets nothing else through; only outcomes carry fds.
            frame.closeDescriptors()
        }
        return nil
    }

    /// Asks the host's handler off the reader thread (it may take its time, e.g. ask the user)
    /// and sends its answer, after the answers to the request's earlier open-URLs: a result
    /// names only the request, so appexd takes results in the order it sent the open-URLs.
    /// If the request has ended meanwhile the answer is stale and dropped.
    private func answer(_ request: OpenURL) {
        let handler = openURL
        let connection = connection
        state.withLock { s in
            let previous = s.openURLTails[request.requestID]
            s.openURLTails[request.requestID] = Task {
                await previous?.value
                let accepted = await handler(request.requestID, request.url)
                _ = try? connection.send(.openURLResult(OpenURLResult(requestID: request.requestID, accepted: accepted)))
            }
        }
    }
}
