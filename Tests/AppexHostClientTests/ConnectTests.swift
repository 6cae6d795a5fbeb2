import AppexWire
import AppexWireIO
import Glibc
import Testing

@testable import AppexHostClient

@Suite struct HostClientConnectTests {
    @Test func helloIsExchangedAndCloseEndsTheConnection() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let (connection, hello, credentials) = try d.acceptHello()
            defer { connection.close() }
            try connection.send(.hello(Hello(bundleIdentifier: "appexd", pid: 4242)))
            try FakeAppexd.awaitEnd(connection)
            return (hello, credentials)
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        #expect(client.serviceHello == Hello(bundleIdentifier: "appexd", pid: 4242))
        #expect(client.socketPath == appexd.path)
        client.close()
        client.close()
        let (hello, credentials) = try await served.result()
        #expect(hello.bundleIdentifier == "com.example.host")
        #expect(hello.pid == getpid())
        #expect(hello.protocolVersion == WireProtocol.version)
        #expect(credentials.uid == getuid())
        // Closed: calls fail at once, naming why.
        let error = await #expect(throws: HostClientError.self) { try await client.list() }
        #expect(error?.kind == .connectionLost)
        #expect(error?.message == "the host client was closed")
    }

    @Test func refusedHelloThrowsTheReasonAndMessage() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let (connection, _, _) = try d.acceptHello()
            try connection.send(.refusal(Refusal(reason: .notAuthorized, message: "uid 1000 may not act as a host")))
            connection.close()
        }
        let error = #expect(throws: HostClientError.self) {
            try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        }
        try await served.result()
        #expect(error?.kind == .connectionRefused)
        #expect(error?.reason == .notAuthorized)
        #expect(error?.message == "appexd refused the connection: uid 1000 may not act as a host")
    }

    @Test func closingWithoutHelloIsConnectionLost() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let (connection, _, _) = try d.acceptHello()
            connection.close()
        }
        let error = #expect(throws: HostClientError.self) {
            try HostClient.connect(socketPath: appexd.path, identifier: "com.example.host")
        }
        try await served.result()
        #expect(error?.kind == .connectionLost)
        #expect(error?.message.contains("without answering Hello") == true)
    }

    @Test func nothingListeningIsASocketErrorNamingThePath() throws {
        let path = "/tmp/appex-host-client-absent-\(getpid()).sock"
        let error = #expect(throws: HostClientError.self) {
            try HostClient.connect(socketPath: path, identifier: "com.example.host")
        }
        #expect(error?.kind == .socket)
        #expect(error?.socketError?.errno == ENOENT)
        #expect(error?.message.contains(path) == true)
    }

    @Test func socketPathComesFromTheArgumentThenTheEnvironmentThenTheDefault() {
        #expect(HostClient.resolveSocketPath(explicit: "/a.sock", environment: "/b.sock") == "/a.sock")
        #expect(HostClient.resolveSocketPath(explicit: nil, environment: "/b.sock") == "/b.sock")
        #expect(HostClient.resolveSocketPath(explicit: nil, environment: "") == "/run/appex/appexd.sock")
        #expect(HostClient.resolveSocketPath(explicit: nil, environment: nil) == HostClient.defaultSocketPath)
        #expect(HostClient.defaultSocketPath == "/run/appex/appexd.sock")
    }

    // The only test that sets APPEX_SOCKET; every other test names its socket explicitly.
    @Test func connectReadsAPPEX_SOCKET() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            try FakeAppexd.awaitEnd(connection)
        }
        setenv("APPEX_SOCKET", appexd.path, 1)
        defer { unsetenv("APPEX_SOCKET") }
        let client = try HostClient.connect(identifier: "com.example.host")
        #expect(client.socketPath == appexd.path)
        client.close()
        try await served.result()
    }
}
