import NIOCore
import NIOHTTP1

/// `GET /metrics` over HTTP/1.1 and nothing else: another path is 404, another method on
/// `/metrics` is 405 (with `Allow: GET`). Keep-alive as the client asks (Prometheus keeps its
/// connection between scrapes); pipelined requests are answered in order, one at a time.
///
/// Backpressure: the channel reads only when asked (autoRead off), and this handler asks only
/// when no request waits and the last response was taken by the kernel in full. A client that
/// pipelines and never reads therefore stalls its own connection with one response queued,
/// instead of making appexd buffer an answer to every request it sent.
final class MetricsHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The text exposition format, version 0.0.4.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Produces the body of a scrape on the channel's event loop.
    private let scrape: @Sendable (any NIOCore.EventLoop) -> EventLoopFuture<[UInt8]>
    private let counters: MetricsServerCounters
    private var head: HTTPRequestHead?
    /// Requests decoded and not answered yet: at most one read's worth.
    private var waiting = CircularBuffer<HTTPRequestHead>()
    /// A response is being produced or written.
    private var responding = false
    private var active = true

    init(
        counters: MetricsServerCounters,
        scrape: @escaping @Sendable (any NIOCore.EventLoop) -> EventLoopFuture<[UInt8]>
    ) {
        self.counters = counters
        self.scrape = scrape
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        context.read()
    }

    func channelInactive(context: ChannelHandlerContext) {
        active = false
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
        case .body:
            break  // a body means nothing here
        case .end:
            guard let head else { return }
            self.head = nil
            waiting.append(head)
            answerNext(context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.fireChannelReadComplete()
        // A read that held no whole request (or none at all): ask for the rest.
        readIfIdle(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            counters.idleClosure()
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func readIfIdle(context: ChannelHandlerContext) {
        if active && !responding && waiting.isEmpty { context.read() }
    }

    private func answerNext(context: ChannelHandlerContext) {
        guard active, !responding, let next = waiting.popFirst() else { return }
        responding = true
        respond(to: next, context: context)
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path == "/metrics" else {
            send(.notFound, Array("not found: only /metrics is served here\n".utf8), for: head, context: context)
            return
        }
        guard head.method == .GET else {
            send(
                .methodNotAllowed, Array("method not allowed: GET /metrics\n".utf8), for: head, context: context,
                extra: [("Allow", "GET")])
            return
        }
        scrape(context.eventLoop).assumeIsolated().whenComplete { [self] result in
            guard active else { return }
            switch result {
            case .success(let body):
                send(.ok, body, for: head, context: context, contentType: Self.contentType)
            case .failure(let error):
                send(.internalServerError, Array("scrape failed: \(error)\n".utf8), for: head, context: context)
            }
        }
    }

    private func send(
        _ status: HTTPResponseStatus, _ body: [UInt8], for request: HTTPRequestHead,
        context: ChannelHandlerContext, contentType: String = "text/plain; charset=utf-8",
        extra: [(String, String)] = []
    ) {
        let keepAlive = request.isKeepAlive
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.count))
        for (name, value) in extra { headers.add(name: name, value: value) }
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))),
            promise: nil)
        if request.method != .HEAD {
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if let queued = try? context.channel.syncOptions?.getOption(.bufferedWritableBytes) {
            counters.unflushed(queued)
        }
        // Completes once the kernel took the last byte: only then is the next request answered.
        written.assumeIsolated().whenComplete { [self] result in
            responding = false
            guard case .success = result, keepAlive else {
                context.close(promise: nil)
                return
            }
            counters.flushed()
            answerNext(context: context)
            readIfIdle(context: context)
        }
    }
}
