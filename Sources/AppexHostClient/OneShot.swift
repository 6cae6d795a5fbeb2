/// The answer to one request, set once by the reader thread and awaited by any number of
/// tasks (all get the same result). An answer that nobody claimed is handed to `discard` when
/// the slot goes away, so descriptors that came with it are not leaked.
final class OneShot<Value: Sendable>: @unchecked Sendable {
    private let lock = Lock()
    private var result: Result<Value, HostClientError>?
    private var claimed = false
    private var waiting: [CheckedContinuation<Value, any Error>] = []
    private let discard: (@Sendable (Value) -> Void)?

    init(discard: (@Sendable (Value) -> Void)? = nil) {
        self.discard = discard
    }

    deinit {
        if !claimed, case .success(let value)? = result { discard?(value) }
    }

    /// Sets the result and wakes every waiter; false (and nothing changes) when it was set already.
    @discardableResult
    func fulfill(_ outcome: Result<Value, HostClientError>) -> Bool {
        let woken: [CheckedContinuation<Value, any Error>]? = lock.withLock {
            guard result == nil else { return nil }
            result = outcome
            defer { waiting = [] }
            return waiting
        }
        guard let woken else { return false }
        if !woken.isEmpty, case .success = outcome { lock.withLock { claimed = true } }
        for continuation in woken { continuation.resume(with: outcome.mapError { $0 as any Error }) }
        return true
    }

    var isFulfilled: Bool { lock.withLock { result != nil } }

    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<Value, HostClientError>? = lock.withLock {
                if let result {
                    if case .success = result { claimed = true }
                    return result
                }
                waiting.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready.mapError { $0 as any Error }) }
        }
    }
}
