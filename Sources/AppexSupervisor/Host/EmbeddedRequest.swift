import AppexWire

#if canImport(Glibc)
import Glibc
#endif

/// How a request made in-process ended: refused before it started, or an outcome (with the
/// interruption, when the extension died serving it).
public enum EmbeddedResult: Sendable {
    case refused(Refusal)
    case ended(RequestOutcome, interruption: Interruption?, descriptors: [Int32])
}

extension Supervisor {
    /// Makes a request in-process, as a host would through appexd: `appex request --bundle`,
    /// the tests and the benchmark use it. `openURL` decides on the extension's open-URL
    /// requests (default: refuse). The descriptors become the supervisor's.
    public func request(
        _ request: HostBeginRequest, descriptors: [Int32] = [],
        openURL: @escaping @Sendable (String) -> Bool = { _ in false }
    ) async -> EmbeddedResult {
        await withCheckedContinuation { (c: CheckedContinuation<EmbeddedResult, Never>) in
            loop.post { [self] in
                let sink = EmbeddedSink(continuation: c, openURL: openURL)
                if let refusal = begin(request, descriptors: descriptors, sink: sink) {
                    c.resume(returning: .refused(refusal))
                }
            }
        }
    }

    /// Cancels an in-process request by its id (from any thread).
    public func cancelRequest(_ requestID: UInt64) {
        loop.post { [self] in
            for sink in openRequests.sinks where sink is EmbeddedSink { cancel(hostRequestID: requestID, sink: sink) }
        }
    }

    /// How many requests are open (admitted, not ended), every host's together.
    public func openRequestCount() async -> Int {
        await onLoop { $0.openRequests.count }
    }

    /// The terminations recorded so far, oldest first.
    public func terminationRecords() async -> [TerminationRecord] {
        await onLoop { $0.terminations }
    }

    /// How many instances of `identifier` exist: running, or exited with their end not yet
    /// recorded (reaping and cgroup removal still under way).
    public func liveInstances(of identifier: String) async -> Int {
        await onLoop { $0.slots[identifier]?.instances.count ?? 0 }
    }
}

/// The sink of one in-process request.
final class EmbeddedSink: RequestSink, @unchecked Sendable {
    private let continuation: CheckedContinuation<EmbeddedResult, Never>
    private let decideOpenURL: @Sendable (String) -> Bool
    private var interruption: Interruption?

    init(continuation: CheckedContinuation<EmbeddedResult, Never>, openURL: @escaping @Sendable (String) -> Bool) {
        self.continuation = continuation
        decideOpenURL = openURL
    }

    func requestEnded(_ outcome: RequestOutcome, descriptors: [Int32]) {
        continuation.resume(returning: .ended(outcome, interruption: interruption, descriptors: descriptors))
    }

    func requestInterrupted(_ interruption: Interruption) {
        self.interruption = interruption
    }

    func openURL(_ url: String, requestID: UInt64, reply: @escaping (Bool) -> Void) {
        reply(decideOpenURL(url))
    }
}
