import NIOCore

/// What any local user can make the metrics endpoint hold. The port has no authentication,
/// so each limit bounds what a client gets from appexd, not who may connect.
public struct MetricsServerLimits: Sendable {
    /// Connections open at once; one more is closed as soon as it is accepted. Prometheus
    /// keeps one per target, so a few scrapers and a curl fit well below it.
    public var maximumConnections: Int
    /// A connection that neither sent a byte nor took a response for this long is closed:
    /// one that stalls, or never reads, gives its memory and its place back. Longer than
    /// Prometheus' default scrape interval, so its kept connection normally survives.
    public var idleTimeout: TimeAmount
    /// Bytes taken from a connection per read. Reading stops while a response is unflushed,
    /// so a pipelining client makes appexd hold at most one read's requests and one response.
    public var readBufferBytes: Int

    public init(
        maximumConnections: Int = Self.defaultMaximumConnections,
        idleTimeout: TimeAmount = Self.defaultIdleTimeout,
        readBufferBytes: Int = Self.defaultReadBufferBytes
    ) {
        self.maximumConnections = maximumConnections
        self.idleTimeout = idleTimeout
        self.readBufferBytes = readBufferBytes
    }

    public static let defaultMaximumConnections = 16
    public static let defaultIdleTimeout = TimeAmount.seconds(120)
    public static let defaultReadBufferBytes = 4096
}
