import AppexWire
import AppexWireIO
import Glibc
import Testing

@testable import AppexHostClient

@Suite struct HostClientConnectionEndTests {
    @Test func appexdClosingFailsEveryWaiterAndEveryLaterCall() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            // Both operations reach appexd, then it goes away without answering either.
            let first = try FakeAppexd.next(connection).message
            let second = try FakeAppexd.next(connection).message
            connection.close()
            return [first.type, second.type]
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        defer { client.close() }
        let pending = try client.startRequest(bundleIdentifier: "com.example.share")
        let listing = Task { try await client.list() }

        let request = await #expect(throws: HostClientError.self) { try await pending.outcome() }
        #expect(request?.kind == .connectionLost)
        #expect(request?.message == "appexd closed the connection")
        let admin = await #expect(throws: HostClientError.self) { try await listing.value }
        #expect(admin?.kind == .connectionLost)
        #expect(Set(try await served.result()) == [.hostBeginRequest, .list])

        let later = await #expect(throws: HostClientError.self) { try await client.beginRequest(bundleIdentifier: "x") }
        #expect(later?.kind == .connectionLost)
        for await _ in client.interruptions {}  // finished: the loop ends
    }

    @Test func closingTheClientFailsItsWaiters() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            _ = try FakeAppexd.next(connection)
            try FakeAppexd.awaitEnd(connection)
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        let pending = try client.startRequest(bundleIdentifier: "com.example.share")
        client.close()
        let error = await #expect(throws: HostClientError.self) { try await pending.outcome() }
        #expect(error?.kind == .connectionLost)
        #expect(error?.message == "the host client was closed")
        try await served.result()
    }

    @Test func aProtocolViolationIsRefusedAndEndsTheConnection() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            _ = try FakeAppexd.next(connection)
            // Past the service's own state machine: a result for an operation never begun.
            try connection.socket.send(.adminResult(AdminResult(requestID: 7, extensions: [])))
            return try FakeAppexd.next(connection).message
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        defer { client.close() }
        let pending = try client.startRequest(bundleIdentifier: "com.example.share")
        let error = await #expect(throws: HostClientError.self) { try await pending.outcome() }
        #expect(error?.kind == .protocolError)
        #expect(error?.reason == .protocolError)
        #expect(error?.message.contains("request 7 was never begun") == true)
        guard case .refusal(let refusal) = try await served.result() else {
            Issue.record("appexd was not told why")
            return
        }
        #expect(refusal.reason == .protocolError)
        #expect(refusal.requestID == nil)
        #expect(refusal.message?.contains("AdminResult") == true)
    }

    @Test func aLaterConnectionRefusalFailsWaitersWithItsReason() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            _ = try FakeAppexd.next(connection)
            try connection.send(.refusal(Refusal(reason: .shutdown, message: "appexd is stopping")))
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        defer { client.close() }
        let error = await #expect(throws: HostClientError.self) { try await client.list() }
        #expect(error?.kind == .connectionRefused)
        #expect(error?.reason == .shutdown)
        #expect(error?.message == "appexd refused the connection: appexd is stopping")
        try await served.result()
    }
}
