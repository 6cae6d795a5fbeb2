import AppexMetrics
import NIOCore
import Testing

/// The HTTP side on its own: a real server on a free loopback port, a real TCP client.
@Suite struct MetricsHTTPTests {
    static let body = "# TYPE x counter\nx 1\n"

    func withServer(_ body: (MetricsServer) async throws -> Void) async throws {
        let server = try await MetricsServer.start(host: "127.0.0.1", port: 0) { loop in
            loop.makeSucceededFuture(Array(Self.body.utf8))
        }
        do { try await body(server) } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test func getMetrics() async throws {
        try await withServer { server in
            #expect(server.port > 0)
            let r = try HTTPClient.request(server.address)
            #expect(r.status == 200)
            #expect(r.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            #expect(r.body == Self.body)
            // A query string does not change the path.
            #expect(try HTTPClient.request(server.address, path: "/metrics?name[]=x").status == 200)
        }
    }

    @Test func otherPathsAre404() async throws {
        try await withServer { server in
            for path in ["/", "/metrics/", "/metricsx", "/favicon.ico"] {
                let r = try HTTPClient.request(server.address, path: path)
                #expect(r.status == 404, "\(path)")
            }
            #expect(try HTTPClient.request(server.address, method: "POST", path: "/other").status == 404)
        }
    }

    @Test func otherMethodsAre405() async throws {
        try await withServer { server in
            for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
                let r = try HTTPClient.request(server.address, method: method)
                #expect(r.status == 405, "\(method)")
                #expect(r.header("Allow") == "GET", "\(method)")
            }
            // HEAD's answer has headers only.
            let head = try HTTPClient.exchange(server.address, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let text = String(decoding: head, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 405 ") && text.contains("Allow: GET") && text.hasSuffix("\r\n\r\n"), "\(text)")
        }
    }

    /// Two requests written at once on one kept-alive connection get two answers in order.
    @Test func pipelinedRequestsOnOneConnection() async throws {
        try await withServer { server in
            let raw = try HTTPClient.exchange(
                server.address,
                "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let responses = try HTTPClient.parse(raw[...])
            #expect(responses.map(\.status) == [200, 404])
            #expect(responses.first?.body == Self.body)
        }
    }

    @Test func aTakenPortIsAnError() async throws {
        try await withServer { server in
            await #expect(throws: (any Error).self) {
                let second = try await MetricsServer.start(host: "127.0.0.1", port: server.port) { loop in
                    loop.makeSucceededFuture([])
                }
                await second.stop()
            }
        }
    }
}
