import AppexHostClient
import AppexWire
import Foundation

/// Resumes its continuation with the first value offered; later ones are dropped.
private final class FirstOf<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, Never>?

    init(_ continuation: CheckedContinuation<T, Never>) { self.continuation = continuation }

    func offer(_ value: T) {
        let c: CheckedContinuation<T, Never>? = lock.withLock {
            defer { continuation = nil }
            return continuation
        }
        c?.resume(returning: value)
    }
}

/// Sends one request on `client` and waits for its outcome at most `deadline`: nil when none
/// came by then (the request is cancelled; its outcome, if it ever comes, is dropped).
func request(
    _ client: HostClient, _ behaviour: Behaviour, items: [ExtensionItem],
    deadline: Duration
) async -> Result<ReceivedOutcome, any Error>? {
    let pending: PendingRequest
    do {
        pending = try client.startRequest(bundleIdentifier: behaviour.bundleIdentifier, items: items)
    } catch { return .failure(error) }
    let result: Result<ReceivedOutcome, any Error>? = await withCheckedContinuation { continuation in
        let first = FirstOf<Result<ReceivedOutcome, any Error>?>(continuation)
        let timer = Task {
            try? await Task.sleep(for: deadline)
            if !Task.isCancelled { first.offer(nil) }
        }
        Task {
            do { first.offer(.success(try await pending.outcome())) } catch { first.offer(.failure(error)) }
            timer.cancel()
        }
    }
    if result == nil { try? pending.cancel() }
    return result
}
