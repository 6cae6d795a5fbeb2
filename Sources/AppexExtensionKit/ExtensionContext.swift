import AppexWire
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One request, as its handler sees it: the counterpart of NSExtensionContext.
///
/// Answer it exactly once, with `completeRequest(returningItems:)` or `cancelRequest(with:)`,
/// from any thread or task. A second answer is a no-op that returns false (appexd never sees
/// it), so a handler racing a host cancel or a termination needs no bookkeeping of its own.
///
/// The descriptors that came with the request (attachments whose content is
/// `.descriptor(index:)`) belong to the context; `data(for:)` reads them, and they are closed
/// when the request is answered.
public final class ExtensionContext: Sendable {
    /// appexd's id of this request, unique on the extension's connection.
    public let requestID: UInt64
    /// The items the host sent.
    public let inputItems: [ExtensionItem]

    let runtime: ExtensionRuntime
    /// ScheduleTransfer answers awaited (BackgroundTransfers.swift).
    let transferWaiters = TransferWaiters()
    private let state: Mutex<State>
    /// Held while an OpenURL is queued and sent, so results (which name only the request)
    /// resume the callers in the order their URLs went out.
    private let openURLOrder = Mutex(())

    private struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var answered = false
        var cancellation: RequestError?
        var cancelHandlers: [@Sendable (RequestError) -> Void] = []
        var descriptors: [Int32]
        var openURLWaiters: [Waiter] = []
        var nextWaiterID = 0
        var task: Task<Void, Never>?
        /// The handler's task while it starts on the reader's thread, before `attach` has
        /// its handle: how a host cancel reaches it meanwhile.
        var startingTask: StartingTask?
    }

    /// The running task, held only while it runs (cleared before its body returns, under the
    /// lock that guards every use).
    struct StartingTask: @unchecked Sendable {
        let task: UnsafeCurrentTask
    }

    init(requestID: UInt64, inputItems: [ExtensionItem], descriptors: [Int32], runtime: ExtensionRuntime) {
        self.requestID = requestID
        self.inputItems = inputItems
        self.runtime = runtime
        self.state = Mutex(State(descriptors: descriptors))
    }

    // MARK: answering

    /// Ends the request with `items`. Attachments of the items may refer to descriptors:
    /// `.descriptor(index: i)` is `descriptors[i]`, which stay the caller's (the kernel copies
    /// them to appexd). Returns true when this call answered the request; false when it had
    /// already been answered (nothing is sent) or when the items cannot be sent (too large for
    /// a frame, or descriptors that do not match the attachments): then the request is
    /// cancelled with `ExtensionKitError.Code.invalidReply` and the reason is logged.
    @discardableResult
    public func completeRequest(returningItems items: [ExtensionItem] = [], descriptors: [Int32] = []) -> Bool {
        let message = Message.completeRequest(CompleteRequest(requestID: requestID, items: items))
        if let problem = Self.problem(sending: message, descriptors: descriptors) {
            ExtensionLog.write("request \(requestID): the returned items cannot be sent (\(problem)); cancelling it instead")
            answer(
                .cancelRequest(CancelRequest(requestID: requestID, error: ExtensionKitError.error(.invalidReply, problem))),
                descriptors: [], by: "completeRequest")
            return false
        }
        return answer(message, descriptors: descriptors, by: "completeRequest")
    }

    /// Ends the request as failed or cancelled, with `error` for the host. Returns true when
    /// this call answered the request, false when it had already been answered.
    @discardableResult
    public func cancelRequest(with error: RequestError) -> Bool {
        answer(.cancelRequest(CancelRequest(requestID: requestID, error: error)), descriptors: [], by: "cancelRequest")
    }

    /// Whether the request has been answered (by the handler or by the SDK).
    public var isAnswered: Bool { state.withLock { $0.answered } }

    // The one way a request ends: mark it answered (only the first caller gets past this),
    // send, then release what it held. Sends happen outside the lock so the reader thread,
    // which takes it to deliver cancels and results, never waits on a socket.
    @discardableResult
    func answer(_ message: Message, descriptors: [Int32], by caller: String) -> Bool {
        let claimed: (descriptors: [Int32], waiters: [Waiter])? = state.withLock { s in
            guard !s.answered else { return nil }
            s.answered = true
            defer {
                s.descriptors = []
                s.openURLWaiters = []
            }
            return (s.descriptors, s.openURLWaiters)
        }
        guard let claimed else {
            // After a host cancel the SDK answers at once; a handler finishing later is normal.
            if state.withLock({ $0.cancellation == nil }) {
                ExtensionLog.write("request \(requestID) was already answered; ignoring \(caller)")
            }
            return false
        }
        do {
            try runtime.connection.send(message, descriptors: descriptors)
        } catch {
            ExtensionLog.write("sending the answer to request \(requestID) failed: \(error)")
        }
        for fd in claimed.descriptors { _ = Glibc.close(fd) }
        for waiter in claimed.waiters { waiter.continuation.resume(returning: false) }
        runtime.requestEnded(requestID)
        return true
    }

    /// What would stop `message` from going out with `descriptors`, checked before the
    /// request is marked answered (after that, only the SDK's cancel could still be sent).
    private static func problem(sending message: Message, descriptors: [Int32]) -> String? {
        do {
            let frame = try WireCodec.encode(message)
            let announced = Int(frame[10]) | Int(frame[11]) << 8
            if announced != descriptors.count {
                return "the attachments refer to \(announced) descriptors, \(descriptors.count) were given"
            }
            return nil
        } catch {
            return error.description
        }
    }

    // MARK: cancellation by the host

    /// True once the host has cancelled the request (appexd's CancelRequest).
    public var isCancelled: Bool { state.withLock { $0.cancellation != nil } }

    /// The error the host cancelled with, once it has.
    public var cancellationError: RequestError? { state.withLock { $0.cancellation } }

    /// Runs `body` when the host cancels the request, or at once if it already has. It runs on
    /// the SDK's reader thread: keep it short. The SDK answers the cancelled request with a
    /// CancelRequest right after the hooks return, unless a hook answered it first (for
    /// instance with the partial result it has). The handler's task is cancelled as well, so
    /// `Task.isCancelled` and `withTaskCancellationHandler` see it too.
    public func onCancel(_ body: @escaping @Sendable (RequestError) -> Void) {
        let already: RequestError? = state.withLock { s in
            if let error = s.cancellation { return error }
            s.cancelHandlers.append(body)
            return nil
        }
        if let already { body(already) }
    }

    func hostDidCancel(_ error: RequestError) {
        let hooks: ([@Sendable (RequestError) -> Void], Task<Void, Never>?)? = state.withLock { s in
            guard s.cancellation == nil else { return nil }
            s.cancellation = error
            defer { s.cancelHandlers = [] }
            return (s.cancelHandlers, s.task)
        }
        guard let (handlers, task) = hooks else { return }
        for body in handlers { body(error) }
        // Answer before cancelling the task: once cancelled, the handler may wake on another
        // thread and answer first, and the cancel must be what the host gets.
        answer(.cancelRequest(CancelRequest(requestID: requestID, error: error)), descriptors: [], by: "the host's cancel")
        if let task {
            task.cancel()
        } else {
            // Not attached yet: the handler is still starting on the reader's thread.
            state.withLock { $0.startingTask?.task.cancel() }
        }
    }

    func attach(_ task: Task<Void, Never>) {
        state.withLock { $0.task = task }
    }

    /// Runs `body`, the handler of a task started on the reader's thread, so that a host
    /// cancel reaches the task before `attach` has its handle.
    func startingHere(_ body: () async -> Void) async {
        withUnsafeCurrentTask { current in
            state.withLock { $0.startingTask = current.map(StartingTask.init) }
        }
        await body()
        state.withLock { $0.startingTask = nil }
    }

    // MARK: opening URLs

    /// Asks the host to open `url` (through appexd) and returns whether it did. False without
    /// asking once the request has been answered; pending calls return false when it is.
    /// At most 8 may await an answer per request; a ninth returns false.
    public func open(_ url: String) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            openURLOrder.withLock { _ in
                let id: Int? = state.withLock { s in
                    guard !s.answered else { return nil }
                    s.nextWaiterID += 1
                    s.openURLWaiters.append(Waiter(id: s.nextWaiterID, continuation: continuation))
                    return s.nextWaiterID
                }
                guard let id else { return continuation.resume(returning: false) }
                do {
                    try runtime.connection.send(.openURL(OpenURL(requestID: requestID, url: url)))
                } catch {
                    // Still queued means nobody resumed it: the request was not answered meanwhile.
                    let mine: Waiter? = state.withLock { s in
                        guard let i = s.openURLWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                        return s.openURLWaiters.remove(at: i)
                    }
                    if let mine {
                        ExtensionLog.write("request \(requestID): asking to open \(url) failed: \(error)")
                        mine.continuation.resume(returning: false)
                    }
                }
            }
        }
    }

    func deliverOpenURLResult(accepted: Bool) {
        let waiter: Waiter? = state.withLock { s in s.openURLWaiters.isEmpty ? nil : s.openURLWaiters.removeFirst() }
        waiter?.continuation.resume(returning: accepted)
    }

    // MARK: attachments

    /// The bytes of `attachment`, one of this request's: inline bytes as they came, or
    /// everything its descriptor holds (a regular file from its start, a pipe to its end).
    public func data(for attachment: AppexWire.Attachment) throws(AttachmentError) -> [UInt8] {
        switch attachment.content {
        case .inline(let bytes):
            return bytes
        case .descriptor(let index):
            // Read through a duplicate, so an answer closing the original mid-read (a host
            // cancel on the reader thread) cannot leave this read on a reused descriptor number.
            let fd = try duplicateDescriptor(index)
            defer { _ = Glibc.close(fd) }
            return try DescriptorIO.readAll(fd, index: index)
        }
    }

    private func duplicateDescriptor(_ index: Int) throws(AttachmentError) -> Int32 {
        let result: Result<Int32, AttachmentError> = state.withLock { s in
            if s.answered { return .failure(.requestAnswered(requestID: requestID)) }
            guard s.descriptors.indices.contains(index) else {
                return .failure(.noSuchDescriptor(index: index, received: s.descriptors.count))
            }
            let copy = fcntl(s.descriptors[index], F_DUPFD_CLOEXEC, 0)
            return copy >= 0 ? .success(copy) : .failure(.readFailed(index: index, operation: "fcntl(F_DUPFD_CLOEXEC)", errno: errno))
        }
        return try result.get()
    }
}
