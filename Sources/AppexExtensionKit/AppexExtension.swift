import AppexWire
import AppexWireIO

#if canImport(Glibc)
import Glibc
#endif

/// The entry point of an extension process. An extension's main.swift is one line:
///
///     AppexExtension.main(handler: ShareHandler())
///
/// It checks in with appexd over the inherited socket (fd 3, or `APPEX_SOCKET_FD`), then
/// serves requests on the calling thread until appexd terminates the process or closes the
/// connection. It never returns.
///
/// Exit status: 0 after Terminate (once the open requests are answered) or when appexd closes
/// the connection; 1, with the reason on stderr, when the socket is missing, appexd refuses the
/// check-in, or appexd breaks the protocol.
public enum AppexExtension {
    /// The environment variable through which appexd names the extension it launched.
    public static let bundleIdentifierEnvironment = "APPEX_BUNDLE_IDENTIFIER"

    /// Checks in as `bundleIdentifier` (default: `APPEX_BUNDLE_IDENTIFIER`, which appexd sets)
    /// and serves `handler`.
    public static func main(bundleIdentifier: String? = nil, handler: some ExtensionRequestHandler) -> Never {
        let identifier = bundleIdentifier ?? getenv(bundleIdentifierEnvironment).map { String(cString: $0) }
        guard let identifier, !identifier.isEmpty else {
            ExtensionLog.fail("\(bundleIdentifierEnvironment) is not set: an extension is started by appexd, which sets it")
        }
        ExtensionLog.prefix = "\(identifier)[\(getpid())]"

        let socket: WireSocket
        do {
            socket = try WireSocket.inherited()
        } catch {
            ExtensionLog.fail(
                "no connection to appexd (\(error)); an extension is started by appexd, which passes its socket at fd \(WireProtocol.extensionSocketFD)"
            )
        }
        let connection = WireConnection(socket: socket, role: .extension)
        checkIn(connection, as: identifier)
        ExtensionRuntime(connection: connection, handler: handler).serve()
    }

    /// Hello out, then appexd's Hello (or its Refusal) back.
    private static func checkIn(_ connection: WireConnection, as identifier: String) {
        do {
            try connection.send(.hello(Hello(bundleIdentifier: identifier, pid: getpid())))
        } catch {
            ExtensionLog.fail("sending Hello to appexd failed: \(error)")
        }
        let event: WireConnection.Event
        do {
            event = try connection.receive()
        } catch let error as WireError {
            ExtensionLog.write("appexd's answer to Hello breaks the protocol: \(error)")
            connection.refuseAndClose(for: error)
            exit(1)
        } catch {
            ExtensionLog.fail("reading appexd's answer to Hello failed: \(error)")
        }
        switch event {
        case .message(let frame):
            switch frame.message {
            case .hello:
                return
            case .refusal(let refusal):
                ExtensionLog.fail("appexd refused the check-in: \(ExtensionRuntime.describe(refusal))")
            default:
                // The state machine admits only Hello or a Refusal before check-in completes.
                frame.closeDescriptors()
                ExtensionLog.fail("appexd answered Hello with \(frame.message.type.name)")
            }
        case .endOfStream:
            ExtensionLog.fail("appexd closed the connection before answering Hello")
        case .stale, .wouldBlock:
            ExtensionLog.fail("no answer to Hello from appexd")
        }
    }
}
