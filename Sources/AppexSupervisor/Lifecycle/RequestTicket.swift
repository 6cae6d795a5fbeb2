import AppexCgroups
import AppexWire

#if canImport(Glibc)
import Glibc
#endif

/// One host request from admission to its outcome: who asked (the sink and the host's own
/// request id), what for, where it is (queued, waiting for a launch, at an instance), and the
/// phases measured on the way. Loop thread only.
final class RequestTicket: @unchecked Sendable {
    let hostRequestID: UInt64
    let bundleIdentifier: String
    let items: [AppexWire.ExtensionItem]
    /// The jetsam band the host asked for (HostBeginRequest.band), if any.
    let requestedBand: UInt32?
    /// The attachments' descriptors, owned until forwarded to the extension (or the end).
    private(set) var descriptors: [Int32]
    let sink: RequestSink
    let receivedAt: UInt64
    /// True when this request spawned the instance that serves it.
    var cold = false
    var phases: [RequestOutcome.Phase] = []
    /// The serving instance's peak memory, filled in just before the outcome goes out.
    var peakMemoryBytes: UInt64?
    /// When the BeginRequest went to the extension.
    var sentAt: UInt64 = 0
    var cancelRequested = false
    /// Whether it carried descriptors (they are gone once sent: such a request cannot be sent again).
    private(set) var hadDescriptors: Bool
    /// Sent again once already (Supervisor+Exit, `resendable`).
    var resent = false
    private(set) var ended = false
    /// Set for the supervisor's own request that hands an extension its session's transfer
    /// results: sent as TransferEvents instead of BeginRequest.
    var transferEvents: TransferEvents?
    /// Told each outcome before the host is (the supervisor's history).
    var onEnd: ((RequestOutcome) -> Void)?

    init(request: HostBeginRequest, descriptors: [Int32], sink: RequestSink) {
        requestedBand = request.band
        hostRequestID = request.requestID
        bundleIdentifier = request.bundleIdentifier
        items = request.items
        self.descriptors = descriptors
        hadDescriptors = !descriptors.isEmpty
        self.sink = sink
        receivedAt = MonotonicTime.now
    }

    func addPhase(_ name: String, nanos: UInt64) {
        phases.removeAll { $0.name == name }
        phases.append(.init(name, microseconds: nanos / 1000))
    }

    /// Hands the descriptors over (to be sent); the ticket no longer closes them.
    func takeDescriptors() -> [Int32] {
        defer { descriptors = [] }
        return descriptors
    }

    /// Ends the request once: the outcome goes to the sink, leftover descriptors are closed.
    func end(
        _ outcome: RequestOutcome.Kind, items: [AppexWire.ExtensionItem] = [], returned: [Int32] = [],
        error: RequestError? = nil, reason: Reason? = nil
    ) {
        guard !ended else {
            returned.forEach { _ = close($0) }
            return
        }
        ended = true
        takeDescriptors().forEach { _ = close($0) }
        addPhase("total", nanos: MonotonicTime.now - receivedAt)
        let message = RequestOutcome(
            requestID: hostRequestID, outcome: outcome, items: items, error: error,
            reason: reason, cold: cold, phases: phases, peakMemoryBytes: peakMemoryBytes)
        onEnd?(message)
        sink.requestEnded(message, descriptors: returned)
    }

    func fail(_ reason: Reason, _ message: String) {
        end(.failed, error: RequestError(domain: Self.errorDomain, code: 1, message: message), reason: reason)
    }

    /// The domain of errors appexd itself puts in outcomes.
    static let errorDomain = "dev.appex.appexd"
}
