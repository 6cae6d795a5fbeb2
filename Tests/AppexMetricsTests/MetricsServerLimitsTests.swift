import AppexMetrics
import Foundation
import NIOCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The endpoint's limits against a real listening server and raw TCP clients: a client that
/// pipelines and never reads, more connections than the cap, and connections that go quiet.
@Suite struct MetricsServerLimitsTests {
    /// A large body, so that a few responses fill the kernel's socket buffers and anything
    /// more would have to wait in appexd.
    static let body = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
    static let request = Array("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".utf8)

    func withServer(
        _ limits: MetricsServerLimits = MetricsServerLimits(),
        _ body: (MetricsServer) async throws -> Void
    ) async throws {
        let server = try await MetricsServer.start(host: "127.0.0.1", port: 0, limits: limits) { loop in
            loop.makeSucceededFuture(Self.body)
        }
        do { try await body(server) } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Polls `condition` every 20 ms for up to `seconds`; whether it held.
    func eventually(_ seconds: Double = 10, _ condition: () -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    /// Writes `count` pipelined requests, or as many as the server takes before writing
    /// blocks for a second; how many bytes went out.
    func pipeline(_ fd: Int32, count: Int) -> Int {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = [UInt8]((0..<count).map { _ in Self.request }.joined())
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            sent += n
        }
        return sent
    }

    /// Thousands of requests written at once and never read: the server answers until the
    /// kernel's buffers are full, then stops, holding at most one response of its own.
    @Test func aClientThatNeverReadsStallsItsOwnConnection() async throws {
        try await withServer { server in
            let fd = try HTTPClient.connect(server.address, receiveBuffer: 4096)
            let requests = 5000
            let sent = pipeline(fd, count: requests)
            #expect(sent > 0)
            // Wait until the server stops answering: the kernel holds what it can, then no more.
            var last = -1
            _ = try await eventually {
                let now = server.statistics.responsesFlushed
                defer { last = now }
                return now == last && now > 0
            }
            try await Task.sleep(for: .milliseconds(300))
            let stalled = server.statistics
            #expect(stalled.responsesFlushed < requests / 2, "\(stalled)")
            // Never more than the response being written waits in appexd (its head is small).
            #expect(stalled.peakUnflushedBytes <= Self.body.count + 1024, "\(stalled)")
            #expect(stalled.peakUnflushedBytes > 0, "the test never filled the kernel's buffers: \(stalled)")
            close(fd)
            #expect(try await eventually { server.statistics.openConnections == 0 }, "\(server.statistics)")
            let after = try HTTPClient.request(server.address)
            #expect(after.status == 200 && after.body.utf8.count == Self.body.count)
        }
    }

    /// The same client, closed by the idle timeout: its place is free again.
    @Test func aStalledClientIsClosedByTheIdleTimeout() async throws {
        try await withServer(MetricsServerLimits(idleTimeout: .milliseconds(300))) { server in
            let fd = try HTTPClient.connect(server.address, receiveBuffer: 4096)
            defer { close(fd) }
            _ = pipeline(fd, count: 2000)
            #expect(try await eventually { server.statistics.openConnections == 0 }, "\(server.statistics)")
            #expect(server.statistics.idleClosures == 1)
        }
    }

    /// A connection that sends nothing is closed after the idle timeout; the client sees EOF.
    @Test func anIdleConnectionIsClosed() async throws {
        try await withServer(MetricsServerLimits(idleTimeout: .milliseconds(200))) { server in
            let fd = try HTTPClient.connect(server.address, timeout: 10)
            defer { close(fd) }
            let start = Date()
            var byte: UInt8 = 0
            let n = recv(fd, &byte, 1, 0)
            #expect(n == 0, "recv gave \(n), errno \(errno)")
            #expect(Date().timeIntervalSince(start) < 5)
            #expect(server.statistics.idleClosures == 1)
            // A scrape on a new connection is answered well inside the timeout.
            #expect(try HTTPClient.request(server.address).status == 200)
        }
    }

    /// Past the cap a connection is closed as soon as it is accepted; once one closes, a
    /// new one is served again.
    @Test func connectionsOverTheCapAreClosed() async throws {
        try await withServer(MetricsServerLimits(maximumConnections: 2)) { server in
            let first = try HTTPClient.connect(server.address)
            let second = try HTTPClient.connect(server.address)
            defer { close(second) }
            #expect(try await eventually { server.statistics.openConnections == 2 })
            let third = try HTTPClient.connect(server.address, timeout: 10)
            defer { close(third) }
            var byte: UInt8 = 0
            let n = recv(third, &byte, 1, 0)
            #expect(n == 0 || (n < 0 && errno == ECONNRESET), "recv gave \(n), errno \(errno)")
            #expect(server.statistics.refusedConnections == 1)
            #expect(server.statistics.openConnections == 2)
            close(first)
            #expect(try await eventually { server.statistics.openConnections == 1 })
            #expect(try HTTPClient.request(server.address).status == 200)
        }
    }
}
