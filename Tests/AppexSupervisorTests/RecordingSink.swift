import AppexSupervisor
import AppexWire
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A host as the supervisor sees it (a `RequestSink`), for tests that drive `begin` and
/// `sinkClosed` themselves: it keeps every outcome, in the order they came.
final class RecordingSink: RequestSink, @unchecked Sendable {
    let outcomes = Locked<[RequestOutcome]>([])

    func requestEnded(_ outcome: RequestOutcome, descriptors: [Int32]) {
        descriptors.forEach { _ = close($0) }
        outcomes.mutate { $0.append(outcome) }
    }

    func requestInterrupted(_ interruption: Interruption) {}

    func openURL(_ url: String, requestID: UInt64, reply: @escaping (Bool) -> Void) {
        reply(false)
    }

    /// The outcome of `requestID`, waiting for it up to `seconds`.
    func outcome(_ requestID: UInt64, within seconds: Double = 20) async -> RequestOutcome? {
        let deadline = Date.now + seconds
        while Date.now < deadline {
            if let o = outcomes.value.first(where: { $0.requestID == requestID }) { return o }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }
}
