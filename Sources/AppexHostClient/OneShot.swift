import Synchronization

/// The answer to one request, set once by the reader thread and awaited by any number of
/// tasks (all get the same result). An answer that nobody claimed is handed to `discard` when
/// the slot goes away, so descriptors that came with it are not leaked.
final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, HostClientError>?
        var claimed = false
        var waiting: [CheckedContinuation<Value, any Error>] = []
    }

    private let state = Mutex(State())
    private let discard: (@Sendable (Value) -> Void)?

    init(discard: (@Sendable (Value) -> Void)? = nil) {
        self.discard = discard
    }

    deinit {
        let unclaimed: Value? = state.withLock { s in
            guard !s.claimed, case .success(let value)? = s.result else { return nil }
            return value
        }
        if let unclaimed { discard?(unclaimed) }
    }

    /// Sets the result and wakes every waiter; false (and nothing changes) when it was set already.
    @discardableResult
    func fulfill(_ outcome: Result<Value, HostClientError>) -> Bool {
        let woken: [CheckedContinuation<Value, any Error>]? = state.withLock { s in
            guard s.result == nil else { return nil }
            s.result = outcome
            defer { s.waiting = [] }
            return s.waiting
        }
        guard let woken else { return false }
        if !woken.isEmpty, case .success = outcome { state.withLock { $0.claimed = true } }
        for continuation in woken { continuation.resume(with: outcome.mapError { $0 as any Error }) }
        return true
    }

    var isFulfilled: Bool { state.withLock { $0.result != nil } }

    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<Value, HostClientError>? = state.withLock { s in
                if let result = s.result {
                    if case .success = result { s.claimed = true }
                    return result
                }
                s.waiting.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready.mapError { $0 as any Error }) }
        }
    }
}
