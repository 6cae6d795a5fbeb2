import AppexWire
import AppexWireIO
import Glibc
import Testing

@testable import AppexHostClient

@Suite struct HostClientAdminTests {
    static let share = ExtensionInfo(
        bundleIdentifier: "com.example.share", extensionPoint: "com.apple.share-services",
        enabled: true, displayName: "Share", version: "1.0", containingApp: "com.example.app")
    static let balloon = ExtensionInfo(
        bundleIdentifier: "com.example.balloon", extensionPoint: "com.apple.widgetkit-extension",
        enabled: false)

    @Test func adminOperationsGetResultsOrRefusalsWithDetails() async throws {
        let appexd = try FakeAppexd()
        defer { appexd.cleanUp() }
        let served = try appexd.serve { d in
            let connection = try d.acceptHost()
            defer { connection.close() }
            var commands: [AdminRequest] = []
            for _ in 1...6 {
                guard case .admin(let request) = try FakeAppexd.next(connection).message else {
                    throw FakeAppexd.Failure(description: "expected an admin operation")
                }
                commands.append(request)
                let id = request.requestID
                switch request.command {
                case .list:
                    try connection.send(.adminResult(AdminResult(requestID: id, extensions: [Self.share, Self.balloon])))
                case .install:
                    try connection.send(
                        .refusal(
                            Refusal(
                                reason: .invalidBundle, message: "Broken.appex failed validation", requestID: id,
                                details: [
                                    "Info.plist:12: NSExtension.NSExtensionPointIdentifier: missing",
                                    "Broken: not an ELF executable",
                                ])))
                case .enable:
                    try connection.send(.refusal(Refusal(reason: .notAuthorized, message: "uid 1000 may not administer", requestID: id)))
                case .disable(let bundle), .uninstall(let bundle, _):
                    var info = bundle == Self.share.bundleIdentifier ? Self.share : Self.balloon
                    info.enabled = false
                    try connection.send(.adminResult(AdminResult(requestID: id, extensions: [info])))
                case .jetsam, .status, .cancelTransfers:
                    throw FakeAppexd.Failure(description: "no \(request.command) expected here")
                }
            }
            try FakeAppexd.awaitEnd(connection)
            return commands
        }
        let client = try HostClient.connect(socketPath: appexd.path, identifier: "appex")
        defer { client.close() }

        #expect(try await client.list() == [Self.share, Self.balloon])

        let invalid = await #expect(throws: HostClientError.self) { try await client.install(path: "/tmp/Broken.appex") }
        #expect(invalid?.kind == .refused)
        #expect(invalid?.reason == .invalidBundle)
        #expect(
            invalid?.details == [
                "Info.plist:12: NSExtension.NSExtensionPointIdentifier: missing",
                "Broken: not an ELF executable",
            ])
        #expect(
            invalid?.description == """
                appexd refused the request: Broken.appex failed validation [invalid-bundle]
                  Info.plist:12: NSExtension.NSExtensionPointIdentifier: missing
                  Broken: not an ELF executable
                """)

        let denied = await #expect(throws: HostClientError.self) { try await client.enable("com.example.share") }
        #expect(denied?.reason == .notAuthorized)
        #expect(denied?.requestID == 3)

        #expect(try await client.disable("com.example.share").map(\.enabled) == [false])
        #expect(
            try await client.uninstall("com.example.balloon", removeData: true).map(\.bundleIdentifier)
                == ["com.example.balloon"])
        #expect(try await client.uninstall("com.example.share").count == 1)
        client.close()

        let commands = try await served.result()
        #expect(
            commands == [
                AdminRequest(requestID: 1, command: .list),
                AdminRequest(requestID: 2, command: .install(path: "/tmp/Broken.appex")),
                AdminRequest(requestID: 3, command: .enable(bundleIdentifier: "com.example.share")),
                AdminRequest(requestID: 4, command: .disable(bundleIdentifier: "com.example.share")),
                AdminRequest(requestID: 5, command: .uninstall(bundleIdentifier: "com.example.balloon", removeData: true)),
                AdminRequest(requestID: 6, command: .uninstall(bundleIdentifier: "com.example.share", removeData: false)),
            ])
    }
}
