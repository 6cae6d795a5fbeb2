import AppexWire
import AppexWireIO
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The serving side of a checked-in extension: one reader at a time on two threads of its own
/// (the calling thread and one more, ReaderRole), handlers in tasks.
///
/// The reader decodes every frame, answers pings itself (so a handler that keeps every
/// cooperative thread busy cannot make the process look unresponsive), routes cancels and
/// open-URL results to their contexts, and starts a task per request and per callback. A
/// request's task starts on the reader's own thread and runs there until it returns or first
/// suspends; the other thread reads meanwhile only if that takes longer than the role's
/// patience (ReaderRole), so a quick handler wakes no other thread. All messages go through
/// one WireConnection, whose state machine checks the order of what is sent and received; a
/// frame from appexd that breaks the protocol ends the process.
final class ExtensionRuntime: Sendable {
    let connection: WireConnection
    let handler: any ExtensionRequestHandler
    private let requests = Mutex<[UInt64: ExtensionContext]>([:])
    /// nil without a timer for it: every request then starts on the cooperative pool.
    private let role = ReaderRole()
    /// Set by a Terminate: every reader then waits for the open requests, up to the deadline.
    private let termination = Mutex<Termination?>(nil)

    /// How long open requests may run after a Terminate without a grace period.
    static let defaultTerminationGrace: Duration = .seconds(1)
    /// While terminating, how often the reader looks whether the last request has ended.
    static let terminationPollInterval: Duration = .milliseconds(5)

    init(connection: WireConnection, handler: any ExtensionRequestHandler) {
        self.connection = connection
        self.handler = handler
    }

    private struct Termination: Sendable {
        var reason: Reason
        /// When the SDK cancels what is still open and exits.
        var deadline: ContinuousClock.Instant
    }

    func serve() -> Never {
        if role != nil {
            startStandbyReader()
        } else {
            ExtensionLog.write("no timer for a second reader thread: every request starts on the cooperative pool")
        }
        read()
    }

    /// The second reader thread: it stands by until a reader's handler outlasts the patience.
    private func startStandbyReader() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        // Counted before it runs, so a request that comes before the thread is scheduled is
        // already handled on the reader's thread, as every later one is.
        role?.willStandBy()
        let made = pthread_create(
            &thread, nil,
            { box in
                let runtime = Unmanaged<ExtensionRuntime>.fromOpaque(box!).takeRetainedValue()
                runtime.role?.waitForTurn()
                runtime.read()
            }, box)
        if made != 0 {
            // Without it every request goes to the cooperative pool, as with a busy standby.
            role?.wontStandBy()
            Unmanaged<ExtensionRuntime>.fromOpaque(box).release()
            ExtensionLog.write("cannot start the second reader thread: \(SystemError.text(made))")
        } else {
            pthread_detach(thread)
        }
    }

    /// The reader's loop, on whichever thread holds the role.
    private func read() -> Never {
        while true {
            if let t = termination.withLock({ $0 }) {
                if requests.withLock({ $0.isEmpty }) { exit(0) }
                let left = t.deadline - .now
                if left <= .zero {
                    cancelOpenRequests(because: t.reason)
                    exit(0)
                }
                guard readable(within: min(left, Self.terminationPollInterval)) else { continue }
            }
            guard let frame = nextFrame() else { continue }
            if let t = handle(frame) { termination.withLock { $0 = t } }
        }
    }

    /// The next frame to act on; nil for a stale one. Exits at the end of the stream (appexd
    /// closed the connection: nothing is left to answer to) and on any fault.
    private func nextFrame() -> ReceivedFrame? {
        do {
            switch try connection.receive() {
            case .message(let frame): return frame
            case .stale, .wouldBlock: return nil
            case .endOfStream: exit(0)
            }
        } catch let error as WireError {
            protocolViolation(error)
        } catch {
            ExtensionLog.fail("reading from appexd failed: \(error)")
        }
    }

    /// Acts on one frame; returns the termination when it is a Terminate.
    private func handle(_ frame: ReceivedFrame) -> Termination? {
        switch frame.message {
        case .ping(let sequence):
            send(.pong(sequence: sequence))
        case .beginRequest(let request):
            begin(request, descriptors: frame.descriptors)
        case .cancelRequest(let cancel):
            context(cancel.requestID)?.hostDidCancel(cancel.error)
        case .transferScheduled(let answer):
            let result: TransferScheduling =
                answer.transferID.map { .scheduled(transferID: $0) }
                ?? .refused(answer.reason ?? "refused", answer.message ?? "")
            context(answer.requestID)?.transferWaiters.resume(answer.token, with: result)
        case .transferEvents(let events):
            let context = ExtensionContext(requestID: events.requestID, inputItems: [], descriptors: [], runtime: self)
            requests.withLock { $0[events.requestID] = context }
            let handler = self.handler
            context.attach(
                Task.detached {
                    await handler.handleEvents(forBackgroundSession: events.sessionIdentifier, results: events.results, context: context)
                })
        case .openURLResult(let result):
            context(result.requestID)?.deliverOpenURLResult(accepted: result.accepted)
        case .memoryWarning(let warning):
            let handler = self.handler
            Task.detached { await handler.didReceiveMemoryWarning(level: warning.level) }
        case .requestWillExpire(let expiry):
            if let context = context(expiry.requestID) {
                let handler = self.handler
                Task.detached { await handler.requestWillExpire(context: context, millisecondsLeft: expiry.millisecondsLeft) }
            }
        case .terminate(let terminate):
            // Answer before the kill: keep a tenth of the grace period for the cancels to go out.
            let grace = terminate.graceMilliseconds.map { Duration.milliseconds(Int($0) * 9 / 10) }
            return Termination(reason: terminate.reason, deadline: .now + (grace ?? Self.defaultTerminationGrace))
        case .refusal(let refusal):
            ExtensionLog.fail("appexd refused the connection: \(Self.describe(refusal))")
        default:
            // The state machine lets through only what appexd may send an extension; anything
            // else here is a message the SDK does not know how to serve.
            frame.closeDescriptors()
            protocolViolation(
                WireError(
                    .wrongSender, field: frame.message.type.name,
                    "\(frame.message.type.name) is not served by this extension SDK"))
        }
        return nil
    }

    /// Counts the request as open and starts its handler in a task of its own: on this thread
    /// until the handler returns or first suspends when a thread stands by to read meanwhile
    /// (ReaderRole), else on the cooperative pool. On a thread whose handler was overtaken,
    /// returns only once this thread holds the reader role again.
    private func begin(_ request: BeginRequest, descriptors: [Int32]) {
        let context = ExtensionContext(
            requestID: request.requestID, inputItems: request.items,
            descriptors: descriptors, runtime: self)
        // Registered before the handler runs: the other reader may read a Terminate meanwhile,
        // and must then find this request open rather than exit past it.
        requests.withLock { $0[request.requestID] = context }
        let handler = self.handler
        if let role, role.willRunHandler() {
            context.attach(Task.immediateDetached { await context.startingHere { await handler.beginRequest(with: context) } })
            if !role.didRunHandler() { role.standBy() }
        } else {
            context.attach(Task.detached { await handler.beginRequest(with: context) })
        }
    }

    private func context(_ id: UInt64) -> ExtensionContext? {
        requests.withLock { $0[id] }
    }

    func requestEnded(_ id: UInt64) {
        let context = requests.withLock { $0.removeValue(forKey: id) }
        context?.transferWaiters.resumeAll(.refused(.protocolError, "request \(id) ended before appexd answered"))
    }

    private func cancelOpenRequests(because reason: Reason) {
        let open = requests.withLock { Array($0.values) }
        for context in open {
            let error = ExtensionKitError.error(
                .terminated, "appexd terminated the extension (\(reason)) before request \(context.requestID) was answered")
            context.answer(.cancelRequest(CancelRequest(requestID: context.requestID, error: error)), descriptors: [], by: "termination")
        }
    }

    private func send(_ message: Message) {
        do {
            try connection.send(message)
        } catch {
            ExtensionLog.write("sending \(message.type.name) failed: \(error)")
        }
    }

    /// Section 8 of the protocol: log, tell appexd why (best effort), close, and stop.
    private func protocolViolation(_ error: WireError) -> Never {
        ExtensionLog.write("appexd sent a frame that breaks the protocol: \(error)")
        connection.refuseAndClose(for: error)
        exit(1)
    }

    /// Whether the socket has something to read (or has closed) within `timeout`.
    private func readable(within timeout: Duration) -> Bool {
        let (seconds, attoseconds) = timeout.components
        let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        var entry = pollfd(fd: connection.socket.fd, events: Int16(POLLIN), revents: 0)
        while true {
            let n = poll(&entry, 1, max(milliseconds, 1))
            if n >= 0 { return n > 0 }
            if errno != EINTR { ExtensionLog.fail("poll on the appexd socket failed: \(SystemError.text(errno))") }
        }
    }

    static func describe(_ refusal: Refusal) -> String {
        var text = refusal.reason.rawValue
        if let message = refusal.message { text += ": " + message }
        for detail in refusal.details { text += "\n  " + detail }
        return text
    }
}
