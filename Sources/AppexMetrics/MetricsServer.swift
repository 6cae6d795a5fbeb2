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

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, host: String, port: Int) {
        self.group = group
        self.channel = channel
        self.host = host
        self.port = port
        housekeeping = NIOLockedValueBox(nil)
    }

    /// Binds `host:port` and serves scrapes of `collector`, with the supervisor's snapshot;
    /// refreshes the collector's footprint sampler every its interval, on the same thread.
    public static func start(host: String, port: Int, supervisor: Supervisor,
                             collector: ScrapeCollector) async throws -> MetricsServer {
        let server = try await start(host: host, port: port) { loop in
            loop.makeFutureWithTask { await supervisor.onLoop { $0.metricsSnapshot() } }
                .map { collector.render($0) }
        }
        let sampler = collector.sampler
        let every = TimeAmount.nanoseconds(Int64(sampler.interval.components.seconds) * 1_000_000_000
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

    /// Binds `host:port` and answers `GET /metrics` with what `scrape` produces.
    public static func start(host: String, port: Int,
                             scrape: @escaping @Sendable (any NIOCore.EventLoop) -> EventLoopFuture<[UInt8]>) async throws -> MetricsServer {
        // One thread: scrapes are seconds apart, and the metrics must not compete with the
        // supervisor for the machine's cores.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 16)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(MetricsHTTPHandler(scrape: scrape))
                    }
                }
                .bind(host: host, port: port).get()
            let bound = channel.localAddress?.port ?? port
            return MetricsServer(group: group, channel: channel, host: host, port: bound)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// `host:port` as a URL's authority (IPv6 in brackets).
    public var address: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    /// Stops listening and closes every connection.
    public func stop() async {
        housekeeping.withLockedValue { $0?.cancel(); $0 = nil }
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}
