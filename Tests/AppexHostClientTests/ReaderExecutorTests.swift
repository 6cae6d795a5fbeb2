import AppexWire
import AppexWireIO
import Glibc
import Testing

@testable import AppexHostClient

/// A task that prefers the client's reader executor goes on, after each answer, on the
/// reader thread that received it; the connection's other duties and its end still work.
@Suite struct ReaderExecutorTests {
    /// A fake appexd that answers up to `count` requests, each with its id as text, then
    /// closes the connection (`end`) or waits for the host to close it. It answers each
    /// after a pause: an answer that arrives before its task has suspended finds the task
    /// still on the pool thread, which goes on with it (on a loaded machine, now and then).
    static func answering(_ count: Int, then end: Bool = false) throws -> (FakeAppexd, FakeAppexd.Served<Void>) {
        let appexd = try FakeAppexd()
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            for _ in 0..<count {
                let event = try connection.receive()
                if case .endOfStream = event { return }
                guard case .message(let frame) = event, case .hostBeginRequest(let begin) = frame.message else {
                    throw FakeAppexd.Failure(description: "expected HostBeginRequest")
                }
                usleep(5_000)
                try connection.send(
                    .requestOutcome(
                        RequestOutcome(
                            requestID: begin.requestID, outcome: .completed,
                            items: [ExtensionItem(attributedContentText: "\(begin.requestID)")])))
            }
            if !end { try FakeAppexd.awaitEnd(connection) }
        }
        return (appexd, served)
    }

    @Test func aRequestLoopGoesOnOnTheReaderThread() async throws {
        let (appexd, served) = try Self.answering(20)
        defer { appexd.cleanUp() }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        let executor = try #require(client.readerExecutor as? ReaderExecutor)
        let (texts, onReader) = try await withTaskExecutorPreference(client.readerExecutor) {
            var texts: [String] = []
            var onReader = 0
            for _ in 0..<20 {
                let outcome = try await client.beginRequest(bundleIdentifier: "com.example.share")
                texts.append(outcome.items.first?.attributedContentText ?? "")
                if executor.isReaderThread { onReader += 1 }
            }
            return (texts, onReader)
        }
        #expect(texts == (1...20).map(String.init))
        #expect(onReader >= 1)
        client.close()
        try await served.result()
    }

    @Test func withoutThePreferenceATaskGoesOnInThePool() async throws {
        let (appexd, served) = try Self.answering(5)
        defer { appexd.cleanUp() }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        let executor = try #require(client.readerExecutor as? ReaderExecutor)
        for _ in 0..<5 {
            _ = try await client.beginRequest(bundleIdentifier: "com.example.share")
            #expect(!executor.isReaderThread)
        }
        client.close()
        try await served.result()
    }

    @Test func aTaskOnTheReaderThreadHearsTheConnectionEnd() async throws {
        // appexd answers one request, then closes the connection with the second unanswered.
        let (appexd, served) = try Self.answering(1, then: true)
        defer { appexd.cleanUp() }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        defer { client.close() }
        let error = await #expect(throws: HostClientError.self) {
            try await withTaskExecutorPreference(client.readerExecutor) {
                _ = try await client.beginRequest(bundleIdentifier: "com.example.share")
                _ = try await client.beginRequest(bundleIdentifier: "com.example.share")
            }
        }
        #expect(error?.kind == .connectionLost)
        try await served.result()
    }

    @Test func closingFromTheReaderThreadEndsTheConnection() async throws {
        let (appexd, served) = try Self.answering(10)
        defer { appexd.cleanUp() }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        let executor = try #require(client.readerExecutor as? ReaderExecutor)
        let closedOnReader = try await withTaskExecutorPreference(client.readerExecutor) {
            for _ in 0..<10 {
                _ = try await client.beginRequest(bundleIdentifier: "com.example.share")
                if executor.isReaderThread { break }
            }
            let here = executor.isReaderThread
            client.close()
            return here
        }
        #expect(closedOnReader)
        // The fake appexd sees the end of the stream, and later calls fail at once.
        try await served.result()
        let error = await #expect(throws: HostClientError.self) {
            try await client.beginRequest(bundleIdentifier: "com.example.share")
        }
        #expect(error?.kind == .connectionLost)
    }
}
