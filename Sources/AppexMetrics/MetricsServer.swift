import AppexSupervisor
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The HTTP server behind `GET /metrics`, on an event loop of NIO's own: a scrape never runs
/// on the supervisor's loop, which only hands over a snapshot of its instances
/// (`Supervisor.metricsSnapshot`, a walk over them with no system call).
public final class MetricsServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    /// Where it listens; with port 0 asked for, the port the kernel chose.
    public let host: String
    public let port: Int
    /// The footprint sampler's rounds (nil when the server has none).
    private let housekeeping: NIOLockedValueBox<RepeatedTask?>
    private let counters: MetricsServerCounters

    private init(
        group: MultiThreadedEventLoopGroup, channel: any Channel, host: String, port: Int,
        counters: MetricsServerCounters
    ) {
        self.group = group
        self.channel = channel
        self.host = host
        self.port = port
        self.counters = counters
        housekeeping = NIOLockedValueBox(nil)
    }

    /// What the endpoint holds and has done so far.
    public var statistics: MetricsServerStatistics { counters.snapshot }

    /// Binds `host:port` and serves scrapes of `collector`, with the supervisor's snapshot;
    /// refreshes the collector's footprint sampler every its interval, on the same thread.
    public static func start(
        host: String, port: Int, supervisor: Supervisor, collector: ScrapeCollector,
        limits: MetricsServerLimits = MetricsServerLimits()
    ) async throws -> MetricsServer {
        let server = try await start(host: host, port: port, limits: limits) { loop in
            loop.makeFutureWithTask { await supervisor.onLoop { $0.metricsSnapshot() } }
                .map { collector.render($0) }
        }
        let sampler = collector.sampler
        let every = TimeAmount.nanoseconds(
            Int64(sampler.interval.components.seconds) * 1_000_000_000
                + sampler.interval.components.attoseconds / 1_000_000_000)
        let loop = server.group.next()
        let task = loop.scheduleRepeatedAsyncTask(initialDelay: every, delay: every) { _ in
            loop.makeFutureWithTask { await supervisor.onLoop { $0.metricsSnapshot() } }
                .map { sampler.refresh($0) }
                .map { _ in () }
        }
        server.housekeeping.withLockedValue { $0 = task }
        return server
    }

    /// Binds `host:port` and answers `GET /metrics` with what `scrape` produces, within `limits`.
    public static func start(
        host: String, port: Int, limits: MetricsServerLimits = MetricsServerLimits(),
        scrape: @escaping @Sendable (any NIOCore.EventLoop) -> EventLoopFuture<[UInt8]>
    ) async throws -> MetricsServer {
        // One thread: scrapes are seconds apart, and the metrics must not compete with the
        // supervisor for the machine's cores.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let counters = MetricsServerCounters()
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 16)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                // Reads only when the handler asks, one buffer at a time (MetricsHTTPHandler).
                .childChannelOption(.autoRead, value: false)
                .childChannelOption(.maxMessagesPerRead, value: 1)
                .childChannelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: limits.readBufferBytes))
                .childChannelInitializer { channel in
                    // Over the cap: a failed initializer makes NIO close the connection at once.
                    guard counters.admit(limit: limits.maximumConnections) else {
                        return channel.eventLoop.makeFailedFuture(ConnectionRefused())
                    }
                    channel.closeFuture.whenComplete { _ in counters.release() }
                    return channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(IdleStateHandler(allTimeout: limits.idleTimeout))
                        // Pipelining is this handler's: NIO's would answer the next request
                        // as soon as a response is written, flushed or not.
                        try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: true)
                        try pipeline.addHandler(MetricsHTTPHandler(counters: counters, scrape: scrape))
                    }
                }
                .bind(host: host, port: port).get()
            let bound = channel.localAddress?.port ?? port
            return MetricsServer(group: group, channel: channel, host: host, port: bound, counters: counters)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Why a connection over the cap was closed (NIO hands it to the listening channel, which drops it).
    private struct ConnectionRefused: Error {}

    /// `host:port` as a URL's authority (IPv6 in brackets).
    public var address: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    /// Stops listening and closes every connection.
    public func stop() async {
        housekeeping.withLockedValue {
            $0?.cancel()
            $0 = nil
        }
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}
