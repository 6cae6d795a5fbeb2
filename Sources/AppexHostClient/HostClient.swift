import AppexWire
import AppexWireIO
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A host application's connection to appexd's control socket (Docs/protocol.md: the control
/// channel; this end has role `host`, appexd `service`). Through it a host runs requests on
/// extensions, cancels them, hears when the extension serving one dies, answers the
/// extensions' open-URL requests, and (as an administrator) installs and toggles extensions.
///
/// ```swift
/// let client = try HostClient.connect(identifier: "com.example.notes")
/// let result = try await client.beginRequest(bundleIdentifier: "com.example.share",
///                                            items: [ExtensionItem(attributedContentText: "hi")])
/// print(result.outcome, result.items, result.phases)
/// ```
///
/// **Threading.** `connect` is synchronous: it sends Hello and blocks until appexd answers.
/// It then starts one reader thread (a plain OS thread, not a task: it spends its life blocked
/// in `recvmsg`). That thread is the only one that reads the socket; it hands each answer to
/// the task waiting for it (through a continuation; a task that prefers `readerExecutor` goes
/// on right there instead of on a pool thread), yields interruptions into
/// `interruptions`, answers pings, and starts a task for each open-URL request, which runs the
/// handler and sends its answer. Any task may call any method concurrently: sends go through
/// `WireConnection`, which serialises them and checks each against the protocol's state
/// machine, and beginning a request holds a lock from choosing its id until it is sent, so ids
/// reach appexd strictly increasing. A send is a blocking `sendmsg` of one small record on the
/// caller's thread. When the connection ends (appexd closes it, refuses it, breaks the
/// protocol, or `close()` is called) every waiting call fails with `HostClientError`
/// (`.connectionLost`, `.connectionRefused` or `.protocolError`), `interruptions` finishes, and
/// every later call fails at once with the same error.
///
/// **Descriptors.** Attachments of kind `.descriptor(index:)` are sent with the request in
/// one `SCM_RIGHTS` message: the kernel duplicates them into appexd, and the caller keeps (and
/// closes) its own. Descriptors that come back with an outcome belong to the caller
/// (`ReceivedOutcome.descriptors`).
public final class HostClient: Sendable {
    /// Decides whether the host opens a URL an extension asked for, during the host's request
    /// `requestID`. Runs on a task of its own; appexd waits for the answer.
    public typealias OpenURLHandler = @Sendable (_ requestID: UInt64, _ url: String) async -> Bool

    /// The control socket when neither the caller nor `APPEX_SOCKET` names one.
    public static let defaultSocketPath = WireProtocol.defaultControlSocketPath

    /// Refuses every URL: a host that has not said how to open URLs opens none.
    public static let refuseEveryURL: OpenURLHandler = { _, _ in false }

    /// appexd's Hello: its protocol version, identifier and pid.
    public let serviceHello: Hello
    /// The path this client connected to.
    public let socketPath: String
    /// Extensions that died or were killed while serving one of this client's requests, with
    /// the kill reason and signal. Each is followed by that request's failed outcome. Keeps the
    /// newest 64 when nobody reads; finishes when the connection ends.
    public let interruptions: AsyncStream<Interruption>
    /// Background-transfer results of this host's app's extensions (Docs/transfers.md): when
    /// every transfer of a session is over and a host that said the containing app's bundle
    /// identifier in Hello is connected, it gets them instead of the extension. Keeps the
    /// newest 64 when nobody reads; finishes when the connection ends.
    public let transferEvents: AsyncStream<TransferEvents>

    private let core: ClientCore
    private let reader: ReaderThread
    private let isClosed = Mutex(false)

    private init(
        serviceHello: Hello, socketPath: String, interruptions: AsyncStream<Interruption>,
        transferEvents: AsyncStream<TransferEvents>, core: ClientCore, reader: ReaderThread
    ) {
        self.serviceHello = serviceHello
        self.socketPath = socketPath
        self.interruptions = interruptions
        self.transferEvents = transferEvents
        self.core = core
        self.reader = reader
    }

    deinit { close() }

    /// The socket path a client uses: `explicit`, else `$APPEX_SOCKET` (when set and not
    /// empty), else `defaultSocketPath`.
    public static func socketPath(explicit: String? = nil) -> String {
        resolveSocketPath(explicit: explicit, environment: getenv(WireProtocol.controlSocketEnvironment).map { String(cString: $0) })
    }

    static func resolveSocketPath(explicit: String?, environment: String?) -> String {
        if let explicit { return explicit }
        if let environment, !environment.isEmpty { return environment }
        return defaultSocketPath
    }

    /// Connects to appexd, introduces this host as `identifier` (its own bundle identifier)
    /// and waits for appexd's Hello. Blocks until appexd answers.
    ///
    /// - Parameters:
    ///   - socketPath: the control socket; nil: `$APPEX_SOCKET`, else `defaultSocketPath`.
    ///   - identifier: the host's identifier, sent in Hello (informational: appexd authorises
    ///     by the uid the kernel reports for this socket).
    ///   - openURL: decides the extensions' open-URL requests; by default every one is refused.
    /// - Throws: `HostClientError`: `.socket` when nothing listens there or access is denied,
    ///   `.connectionRefused` with appexd's reason (`not-authorized`, `version-mismatch`) and
    ///   message, `.connectionLost` when appexd closes without answering, `.protocolError`.
    ///
    /// Host-only: built with the `APPEX_EXTENSION` compilation condition (extension code,
    /// Docs/extension-safe-api.md) a call is a compile-time error. An extension's sandbox
    /// cannot reach the control socket; its requests arrive through its `ExtensionContext`.
    #if APPEX_EXTENSION
    @available(
        *, unavailable,
        message:
            "unavailable in app extensions: HostClient is for host applications; an extension is reached through appexd and answers through its ExtensionContext"
    )
    #endif
    public static func connect(
        socketPath: String? = nil, identifier: String,
        openURL: @escaping OpenURLHandler = refuseEveryURL
    ) throws -> HostClient {
        let path = Self.socketPath(explicit: socketPath)
        let socket: WireSocket
        do {
            socket = try WireSocket.connect(path: path)
        } catch {
            throw HostClientError(.socket, message: "cannot connect to appexd at \(path): \(error)", socketError: error)
        }
        let connection = WireConnection(socket: socket, role: .host)
        let hello: Hello
        do {
            hello = try checkIn(connection, identifier: identifier, path: path)
        } catch {
            connection.close()
            throw error
        }
        let (stream, sink) = AsyncStream.makeStream(of: Interruption.self, bufferingPolicy: .bufferingNewest(64))
        let (events, eventSink) = AsyncStream.makeStream(of: TransferEvents.self, bufferingPolicy: .bufferingNewest(64))
        let core = ClientCore(connection: connection, openURL: openURL, interruptionSink: sink, transferEventSink: eventSink)
        let reader: ReaderThread
        do {
            reader = try ReaderThread { core.readUntilEnd() }
        } catch {
            connection.close()
            throw error
        }
        return HostClient(serviceHello: hello, socketPath: path, interruptions: stream, transferEvents: events, core: core, reader: reader)
    }

    /// Hello out, appexd's Hello (or Refusal) in, on the caller's thread.
    private static func checkIn(_ connection: WireConnection, identifier: String, path: String) throws(HostClientError) -> Hello {
        do {
            try connection.send(.hello(Hello(bundleIdentifier: identifier, pid: getpid())))
        } catch let error as WireError {
            throw HostClientError(.invalidRequest, message: "Hello not sent: \(error)")
        } catch {
            throw HostClientError(
                .connectionLost, message: "sending Hello to appexd at \(path) failed: \(error)",
                socketError: error as? SocketError)
        }
        while true {
            let event: WireConnection.Event
            do {
                event = try connection.receive()
            } catch let error as WireError {
                connection.refuseAndClose(for: error)
                throw HostClientError(
                    .protocolError, reason: error.refusalReason,
                    message: "appexd at \(path) answered Hello with a frame that breaks the protocol: \(error)")
            } catch {
                throw HostClientError(
                    .connectionLost, message: "reading appexd's Hello from \(path) failed: \(error)",
                    socketError: error as? SocketError)
            }
            switch event {
            case .message(let frame):
                frame.closeDescriptors()
                switch frame.message {
                case .hello(let hello): return hello
                case .refusal(let refusal): throw HostClientError(refusal: refusal)
                default:
                    // The state machine lets only Hello or a connection Refusal through first.
                    throw HostClientError(.protocolError, message: "appexd answered Hello with \(frame.message.type.name)")
                }
            case .stale, .wouldBlock:
                continue
            case .endOfStream:
                throw HostClientError(.connectionLost, message: "appexd at \(path) closed the connection without answering Hello")
            }
        }
    }

    /// Ends the connection: every waiting call fails with `.connectionLost` ("the host client
    /// was closed"), the reader thread is joined and the socket closed. Idempotent; also done
    /// when the client is released.
    public func close() {
        let first = isClosed.withLock { closed -> Bool in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        if core.readerExecutor.isReaderThread {
            // A task running on the reader thread (readerExecutor): the reader cannot be
            // joined from itself, and closes the descriptor when it stops.
            core.shutdownFromReader()
            reader.detach()
            return
        }
        core.shutdown()
        reader.join()
        core.connection.close()
    }

    /// An executor that runs a task on this connection's reader thread when an answer it
    /// awaits arrives, where the default wakes a thread of the cooperative pool for it: a
    /// round trip then costs one thread wake-up less. For a host that sends requests one
    /// after another and waits for each:
    ///
    /// ```swift
    /// try await withTaskExecutorPreference(client.readerExecutor) {
    ///     for text in texts {
    ///         let result = try await client.beginRequest(bundleIdentifier: id, items: [...])
    ///         ...
    ///     }
    /// }
    /// ```
    ///
    /// While such a task runs, the connection is not read (other answers, pings and
    /// interruptions wait): keep that code short and never block in it, as on an event loop.
    /// Tasks enqueued from elsewhere run on the global concurrent executor.
    public var readerExecutor: any TaskExecutor { core.readerExecutor }

    // MARK: requests

    /// Sends a HostBeginRequest and returns at once with a handle to await or cancel it.
    ///
    /// - Parameters:
    ///   - items: the input items; an attachment `.descriptor(index: i)` refers to
    ///     `descriptors[i]`.
    ///   - descriptors: sent with the request (`SCM_RIGHTS`); they stay the caller's to close,
    ///     appexd receives its own duplicates. Their count must match the attachments that refer
    ///     to descriptors.
    ///   - band: the jetsam band while the extension serves this request (idle 0, foreground
    ///     100, critical 190); nil: the extension point's policy decides.
    /// - Throws: `HostClientError` `.invalidRequest` (nothing sent) or the error that ended
    ///   the connection.
    public func startRequest(
        bundleIdentifier: String, items: [ExtensionItem] = [], descriptors: [Int32] = [],
        band: UInt32? = nil
    ) throws -> PendingRequest {
        let slot = OneShot<ReceivedOutcome>(discard: { $0.closeDescriptors() })
        let id = try core.begin(.request(slot), descriptors: descriptors) { id in
            .hostBeginRequest(HostBeginRequest(requestID: id, bundleIdentifier: bundleIdentifier, items: items, band: band))
        }
        return PendingRequest(requestID: id, bundleIdentifier: bundleIdentifier, core: core, slot: slot)
    }

    /// Runs a request on the extension `bundleIdentifier` and returns how it ended: completed
    /// with items, cancelled with the extension's error, or failed with appexd's reason
    /// (`launch-timeout`, `crashed`, ...), with the launch and request phases.
    ///
    /// Cancelling the calling task sends HostCancelRequest; the call still returns the outcome
    /// appexd reports (usually `.cancelled`). Parameters as for `startRequest`.
    ///
    /// - Throws: `HostClientError` `.refused` when appexd refused the request before it reached
    ///   an extension (`unknown-extension`, `disabled`, `not-activated`, `not-authorized`,
    ///   `busy`; `details` may say more), or the error that ended the connection.
    public func beginRequest(
        bundleIdentifier: String, items: [ExtensionItem] = [], descriptors: [Int32] = [],
        band: UInt32? = nil
    ) async throws -> ReceivedOutcome {
        let pending = try startRequest(bundleIdentifier: bundleIdentifier, items: items, descriptors: descriptors, band: band)
        return try await withTaskCancellationHandler {
            try await pending.outcome()
        } onCancel: {
            try? pending.cancel()
        }
    }

    /// Asks appexd to cancel request `requestID` (HostCancelRequest). The request still ends
    /// with its outcome. Cancelling a request that has already ended does nothing.
    ///
    /// - Throws: `HostClientError` `.invalidRequest` for an id this client never used, or the
    ///   error that ended the connection.
    public func cancel(requestID: UInt64) throws {
        try core.cancel(requestID)
    }

    // MARK: administration

    /// Installs the containing app or bare `.appex` at `path` (as appexd sees the path).
    /// Installed extensions start disabled. Returns the extensions installed.
    ///
    /// - Throws: `HostClientError` `.refused`, e.g. `not-authorized`, or `invalid-bundle` with
    ///   the validation findings in `details`.
    public func install(path: String) async throws -> [ExtensionInfo] {
        try await administer(.install(path: path))
    }

    /// Every installed extension.
    public func list() async throws -> [ExtensionInfo] {
        try await administer(.list)
    }

    /// Enables an installed extension; returns it as it now is.
    public func enable(_ bundleIdentifier: String) async throws -> [ExtensionInfo] {
        try await administer(.enable(bundleIdentifier: bundleIdentifier))
    }

    /// Disables an installed extension; returns it as it now is.
    public func disable(_ bundleIdentifier: String) async throws -> [ExtensionInfo] {
        try await administer(.disable(bundleIdentifier: bundleIdentifier))
    }

    /// Uninstalls an extension; its data container goes too only when `removeData` is true.
    /// Returns the extensions removed.
    public func uninstall(_ bundleIdentifier: String, removeData: Bool = false) async throws -> [ExtensionInfo] {
        try await administer(.uninstall(bundleIdentifier: bundleIdentifier, removeData: removeData))
    }

    /// appexd's memory governor: the pressure level and every live instance in victim order.
    public func jetsam() async throws -> JetsamReport {
        guard let report = try await administerWhole(.jetsam).jetsam else {
            throw HostClientError(refusal: Refusal(reason: .protocolError, message: "the answer to Jetsam carries no jetsam list"))
        }
        return report
    }

    /// Where appexd keeps its state: its registry and history database, the extensions' logs.
    public func stateDirectory() async throws -> String {
        guard let path = try await administerWhole(.status).stateDirectory else {
            throw HostClientError(refusal: Refusal(reason: .protocolError, message: "the answer to Status carries no state directory"))
        }
        return path
    }

    /// Cancels background transfers that are not over: `selector` is a transfer id, a bundle
    /// identifier, or `bundle/session`. Administrators may cancel any; a host only those of its
    /// own app's extensions (the identifier it connected with).
    public func cancelTransfers(_ selector: String) async throws {
        _ = try await administerWhole(.cancelTransfers(selector: selector))
    }

    private func administer(_ command: AdminRequest.Command) async throws -> [ExtensionInfo] {
        try await administerWhole(command).extensions
    }

    private func administerWhole(_ command: AdminRequest.Command) async throws -> AdminResult {
        let slot = OneShot<AdminResult>()
        _ = try core.begin(.admin(slot)) { id in .admin(AdminRequest(requestID: id, command: command)) }
        return try await slot.value()
    }
}

extension HostClient {
    /// The protocol state of the connection (requests in flight, whether it is open).
    public var connectionState: ConnectionState { core.connection.snapshot }
}
