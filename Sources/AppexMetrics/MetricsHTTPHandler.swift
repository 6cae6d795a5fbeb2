import NIOCore
import NIOHTTP1

/// `GET /metrics` over HTTP/1.1 and nothing else: another path is 404, another method on
/// `/metrics` is 405 (with `Allow: GET`). Keep-alive as the client asks (Prometheus keeps its
/// connection between scrapes); NIO's pipelining handler, ahead of this one, holds a
/// pipelined request back until the answer before it is written.
final class MetricsHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The text exposition format, version 0.0.4.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Produces the body of a scrape on the channel's event loop.
    private let scrape: @Sendable (any NIOCore.EventLoop) -> EventLoopFuture<[UInt8]>
    private var head: HTTPRequestHead?
    private var active = true

    init(scrape: @escaping @Sendable (any NIOCore.EventLoop) -> EventLoopFuture<[UInt8]>) {
        self.scrape = scrape
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
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path == "/metrics" else {
            send(.notFound, Array("not found: only /metrics is served here\n".utf8), for: head, context: context)
            return
        }
        guard head.method == .GET else {
            send(.methodNotAllowed, Array("method not allowed: GET /metrics\n".utf8), for: head, context: context,
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

    private func send(_ status: HTTPResponseStatus, _ body: [UInt8], for request: HTTPRequestHead,
                      context: ChannelHandlerContext, contentType: String = "text/plain; charset=utf-8",
                      extra: [(String, String)] = []) {
        let keepAlive = request.isKeepAlive
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.count))
        for (name, value) in extra { headers.add(name: name, value: value) }
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))),
                      promise: nil)
        if request.method != .HEAD {
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }
}
