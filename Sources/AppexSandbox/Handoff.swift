import Dispatch
import Synchronization

/// One value (or the error that stands for it) passed once from one thread to another that
/// waits for it. `ExtensionRun.prepare` passes its sandbox-build thread the planned
/// container this way, then word that the container's directories exist: that thread does
/// what needs neither meanwhile, and waits only where it needs them (the view's plan, the
/// init's clone).
///
/// Whoever made a `Handoff` must deliver or fail it on every way out, or a waiter waits
/// forever; a second delivery is ignored.
final class Handoff<Value: Sendable>: Sendable {
    // Two optionals, not a `Result<Value, any Error>`: making that type's metadata checks
    // `any Error: Error` at run time, a scan of every conformance record in the executable
    // the first time for each Value (seen in `perf record` of `appex run`).
    private struct State {
        var value: Value?
        var error: (any Error)?
        var settled = false
    }

    private let state = Mutex(State())
    /// Signalled once when settled; each waiter passes the signal on to the next.
    private let settled = DispatchSemaphore(value: 0)

    init() {}

    func deliver(_ value: Value) { settle(value, nil) }

    func fail(_ error: any Error) { settle(nil, error) }

    /// Blocks until the value is delivered, then returns it (or throws the error it failed with).
    func wait() throws -> Value {
        settled.wait()
        settled.signal()
        let (value, error) = state.withLock { ($0.value, $0.error) }
        if let error { throw error }
        return value!
    }

    private func settle(_ value: Value?, _ error: (any Error)?) {
        let first = state.withLock { s -> Bool in
            guard !s.settled else { return false }
            s = State(value: value, error: error, settled: true)
            return true
        }
        if first { settled.signal() }
    }
}
