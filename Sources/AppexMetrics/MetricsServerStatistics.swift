import NIOConcurrencyHelpers

/// What the endpoint has done and holds, for tests and diagnostics.
public struct MetricsServerStatistics: Sendable, Equatable {
    /// Connections open now.
    public var openConnections = 0
    /// Connections closed at accept because `maximumConnections` were open.
    public var refusedConnections = 0
    /// Connections closed by the idle timeout.
    public var idleClosures = 0
    /// Responses handed to the kernel in full.
    public var responsesFlushed = 0
    /// The most bytes one connection had queued in NIO and not yet taken by the kernel, read
    /// just after a response was written: with backpressure, never more than one response.
    public var peakUnflushedBytes = 0
}

/// The endpoint's counters, shared by the accept path and every connection's handler.
final class MetricsServerCounters: Sendable {
    private let box = NIOLockedValueBox(MetricsServerStatistics())

    var snapshot: MetricsServerStatistics { box.withLockedValue { $0 } }

    /// Takes a connection's place; false when every place is taken (the caller closes it).
    func admit(limit: Int) -> Bool {
        box.withLockedValue { s in
            guard s.openConnections < limit else {
                s.refusedConnections += 1
                return false
            }
            s.openConnections += 1
            return true
        }
    }

    func release() { box.withLockedValue { $0.openConnections -= 1 } }
    func idleClosure() { box.withLockedValue { $0.idleClosures += 1 } }
    func flushed() { box.withLockedValue { $0.responsesFlushed += 1 } }
    func unflushed(_ bytes: Int) { box.withLockedValue { $0.peakUnflushedBytes = max($0.peakUnflushedBytes, bytes) } }
}
