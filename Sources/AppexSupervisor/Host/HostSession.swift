import AppexRegistry
import AppexWire
import AppexWireIO

#if canImport(Glibc)
import Glibc
#endif

/// One host (or `appex` CLI) connection on the control socket. Loop thread only.
///
/// The peer's uid comes from SO_PEERCRED at accept; the configuration decides whether it may
/// act as a host (requests), an administrator (install, enable, …), both or neither (refused
/// at Hello). A frame that breaks the protocol closes this connection only, with a logged
/// reason; its requests are cancelled.
final class HostSession: RequestSink, @unchecked Sendable {
    private unowned let server: ControlServer
    private var connection: WireConnection?
    let peer: PeerCredentials
    private let fd: Int32
    /// Open-URL questions waiting for the host's answer, by the host's request id.
    /// Per request, the open-URLs awaiting the host's result, oldest first: the host answers
    /// them in order (up to `WireLimits.openURLsPerRequest` may wait).
    private var openURLReplies: [UInt64: [(Bool) -> Void]] = [:]
    /// Closes the connection if Hello has not come by then (ClientLimits.helloTimeout).
    var helloTimer: EventLoop.TimerID?
    private var pings = PingAllowance()
    /// The class of client its connection counts against (ControlServer's bounds).
    var countedAs = ControlServer.ClientClass.stranger
    /// The bundle identifier the host gave in Hello, once it may host.
    private var helloIdentifier: String?

    var isOpen: Bool { connection != nil }

    /// Whether this host's uid may act for containing app `app` now (the configuration in force).
    func speaks(for app: String) -> Bool { server.authorization.maySpeak(forApp: app, uid: peer.uid) }

    /// A session's transfer results for this host's app (HostTransferEvents).
    func deliver(_ events: TransferEvents) {
        var e = events
        e.requestID = 0
        send(.transferEvents(e))
    }

    init(server: ControlServer, socket: WireSocket, peer: PeerCredentials) {
        self.server = server
        self.peer = peer
        fd = socket.fd
        connection = WireConnection(socket: socket, role: .service)
    }

    private var supervisor: Supervisor { server.supervisor }
    var label: String { "host pid \(peer.pid) uid \(peer.uid)" }

    func readable() {
        guard let connection else { return }
        let event: WireConnection.Event
        do {
            event = try connection.receive(blocking: false)
        } catch let error as WireError {
            server.logger.warning("\(label): protocol error, closing: \(error)")
            close(refusal: (error.refusalReason, error.description))
            return
        } catch {
            server.logger.warning("\(label): connection failed: \(error)")
            close()
            return
        }
        switch event {
        case .wouldBlock, .stale: return
        case .endOfStream: close()
        case .message(let frame): handle(frame)
        }
    }

    private func handle(_ frame: ReceivedFrame) {
        let auth = server.authorization
        switch frame.message {
        case .hello(let hello):
            guard auth.mayHost(uid: peer.uid) || auth.mayAdminister(uid: peer.uid) else {
                server.logger.warning("\(label): not authorized, closing")
                close(refusal: (.notAuthorized, "uid \(peer.uid) may neither host nor administer (appexd configuration)"))
                return
            }
            supervisor.loop.cancel(helloTimer)
            helloTimer = nil
            send(.hello(Hello(bundleIdentifier: "appexd", pid: getpid())))
            if auth.mayHost(uid: peer.uid) {
                // A host of a containing app takes its extensions' transfer events, if its uid
                // speaks for that app when they are delivered.
                helloIdentifier = hello.bundleIdentifier
                supervisor.transferEventHosts[hello.bundleIdentifier, default: []].append(self)
            }
        case .ping(let sequence):
            guard pings.take() else {
                server.refusals.warning(server.logger, key: "control: ping flood", "\(label): pings faster than allowed, closing")
                close(
                    refusal: (
                        .protocolError,
                        "more than \(Int(PingAllowance.perSecond)) pings a second (after a burst of \(Int(PingAllowance.burst))); hosts need not ping appexd"
                    ))
                return
            }
            send(.pong(sequence: sequence))
        case .hostBeginRequest(let request):
            guard auth.mayHost(uid: peer.uid) else {
                frame.closeDescriptors()
                server.supervisor.metrics.refusal(reason: Reason.notAuthorized.rawValue)
                send(
                    .refusal(
                        Refusal(
                            reason: .notAuthorized, message: "uid \(peer.uid) may not act as a host",
                            requestID: request.requestID)))
                return
            }
            if let refusal = boundsRefusal(request, descriptors: frame.descriptors) {
                frame.closeDescriptors()
                server.supervisor.metrics.refusal(reason: refusal.reason.rawValue)
                send(.refusal(refusal))
                return
            }
            if let refusal = supervisor.begin(request, descriptors: frame.descriptors, sink: self) {
                send(.refusal(refusal))
            }
        case .hostCancelRequest(let cancel):
            supervisor.cancel(hostRequestID: cancel.requestID, sink: self)
        case .openURLResult(let result):
            if var waiting = openURLReplies[result.requestID], !waiting.isEmpty {
                let reply = waiting.removeFirst()
                openURLReplies[result.requestID] = waiting.isEmpty ? nil : waiting
                reply(result.accepted)
            }
        case .admin(let admin):
            if case .cancelTransfers(let selector) = admin.command, !auth.mayAdminister(uid: peer.uid),
                auth.mayHost(uid: peer.uid), let app = helloIdentifier
            {
                // A host cancels its own app's extensions' transfers: the app it named in Hello,
                // if its uid speaks for that app.
                guard speaks(for: app) else {
                    send(
                        .refusal(
                            Refusal(
                                reason: .notAuthorized,
                                message: "uid \(peer.uid) does not speak for \(app) (appexd configuration: apps)",
                                requestID: admin.requestID)))
                    return
                }
                cancelOwnTransfers(selector, app: app, requestID: admin.requestID)
                return
            }
            guard auth.mayAdminister(uid: peer.uid) else {
                send(
                    .refusal(
                        Refusal(
                            reason: .notAuthorized, message: "uid \(peer.uid) may not administer",
                            requestID: admin.requestID)))
                return
            }
            administer(admin)
        default:
            frame.closeDescriptors()
        }
    }

    /// A request this connection may not add (ClientLimits); nil when it may be begun.
    private func boundsRefusal(_ request: HostBeginRequest, descriptors: [Int32]) -> Refusal? {
        guard !server.isAdministrator(peer.uid) else { return nil }
        let open = supervisor.openRequests.tickets(of: self)
        let limits = server.limits
        if open.count >= limits.requestsPerConnection {
            return Refusal(
                reason: .busy, message: "this connection has \(open.count) requests open, the most one may (clients.requestsPerConnection)",
                requestID: request.requestID)
        }
        let held = open.reduce(0) { $0 + $1.descriptors.count }
        if held + descriptors.count > limits.descriptorsPerConnection {
            return Refusal(
                reason: .busy,
                message:
                    "this connection's open requests hold \(held) descriptors; \(descriptors.count) more would pass the \(limits.descriptorsPerConnection) one may (clients.descriptorsPerConnection)",
                requestID: request.requestID)
        }
        return nil
    }

    // MARK: administration

    private func administer(_ admin: AdminRequest) {
        let supervisor = self.supervisor
        let id = admin.requestID
        let label = self.label
        server.logger.info("\(label): \(admin.command)")
        // Read here, on the loop, while the connection is surely open.
        let requester: Result<FileIdentity?, any Error> =
            if case .install = admin.command { Result { try self.requester() } } else { .success(nil) }
        // Held strongly until answered: a closed session ignores the send.
        Task { [self] in
            let answer: Message
            do {
                var extensions: [ExtensionInfo] = []
                var jetsam: JetsamReport?
                var stateDirectory: String?
                switch admin.command {
                case .jetsam: jetsam = await supervisor.jetsamReport()
                case .status: stateDirectory = supervisor.registry.stateDirectory
                case .cancelTransfers(let selector):
                    let n = await supervisor.cancelTransfers(selector: selector, by: label)
                    if n == 0 { throw SupervisorError("cancel transfers", "no transfer that is not over matches \(selector)") }
                case .install(let path):
                    extensions = try await supervisor.install(path: path, requester: requester.get()).extensions.map(Self.info)
                case .list: extensions = try await supervisor.list().map(Self.info)
                case .enable(let ext): extensions = [Self.info(try await supervisor.enable(ext))]
                case .disable(let ext): extensions = [Self.info(try await supervisor.disable(ext))]
                case .uninstall(let ext, let removeData):
                    // Gone from the registry: only their identifiers are left to report.
                    extensions = try await supervisor.uninstall(ext, removeData: removeData).map {
                        ExtensionInfo(bundleIdentifier: $0, extensionPoint: "", enabled: false)
                    }
                }
                answer = .adminResult(
                    AdminResult(
                        requestID: id, extensions: extensions, jetsam: jetsam,
                        stateDirectory: stateDirectory))
            } catch {
                answer = .refusal(Self.refusal(for: error, requestID: id))
            }
            supervisor.loop.post { [self] in send(answer) }
        }
    }

    private func cancelOwnTransfers(_ selector: String, app: String, requestID: UInt64) {
        let supervisor = self.supervisor
        let label = self.label
        Task { [self] in
            let n = await supervisor.cancelTransfers(selector: selector, ofApp: app, by: label)
            let answer: Message =
                n > 0
                ? .adminResult(AdminResult(requestID: requestID, extensions: []))
                : .refusal(
                    Refusal(
                        reason: .invalidTransfer, message: "no transfer of \(app)'s extensions that is not over matches \(selector)",
                        requestID: requestID))
            supervisor.loop.post { [self] in send(answer) }
        }
    }

    /// Whose permissions an install from this peer reads its source with: a non-root
    /// administrator's own (uid, gid and groups as the kernel recorded them at connect), so
    /// appexd copies only what that user could read. nil for root.
    private func requester() throws -> FileIdentity? {
        guard peer.uid != 0 else { return nil }
        let groups = try WireSocket(adopting: fd).peerGroups()
        return FileIdentity(uid: peer.uid, gid: peer.gid, groups: groups)
    }

    static func info(_ e: InstalledExtension) -> ExtensionInfo {
        ExtensionInfo(
            bundleIdentifier: e.bundleIdentifier, extensionPoint: e.extensionPoint, enabled: e.isEnabled,
            displayName: e.displayName, version: e.shortVersion ?? e.version,
            containingApp: e.containingAppIdentifier)
    }

    /// A registry failure as the host sees it: a stable reason, the message, and for an
    /// invalid bundle each finding on its own line.
    static func refusal(for error: Error, requestID: UInt64) -> Refusal {
        switch error {
        case RegistryError.invalidBundle(let source, let bundles):
            let details = bundles.flatMap { b in b.findings.map { "\(b.path): \($0)" } }
            return Refusal(reason: .invalidBundle, message: "refused \(source)", requestID: requestID, details: details)
        case RegistryError.unknownExtension(let id):
            return Refusal(reason: .unknownExtension, message: "no installed extension \(id)", requestID: requestID)
        case RegistryError.appGroupRefused(let id, let reasons):
            return Refusal(
                reason: .appGroupRefused, message: "cannot enable \(id)", requestID: requestID,
                details: reasons)
        default:
            return Refusal(reason: Reason("admin-failed"), message: "\(error)", requestID: requestID)
        }
    }

    // MARK: RequestSink

    func requestEnded(_ outcome: RequestOutcome, descriptors: [Int32]) {
        defer { descriptors.forEach { _ = Glibc.close($0) } }
        openURLReplies.removeValue(forKey: outcome.requestID)
        send(.requestOutcome(outcome), descriptors: descriptors)
    }

    func requestInterrupted(_ interruption: Interruption) {
        send(.interruption(interruption))
    }

    func openURL(_ url: String, requestID: UInt64, reply: @escaping (Bool) -> Void) {
        guard connection != nil else {
            reply(false)
            return
        }
        openURLReplies[requestID, default: []].append(reply)
        send(.openURL(OpenURL(requestID: requestID, url: url)))
    }

    // MARK: sending, closing

    /// Never blocks the loop: a host that does not read its socket is disconnected.
    private func send(_ message: Message, descriptors: [Int32] = []) {
        guard let connection else { return }
        do {
            if try !connection.sendWithoutBlocking(message, descriptors: descriptors) {
                server.logger.warning("\(label): not reading its socket, closing")
                close()
            }
        } catch {
            server.logger.warning("\(label): sending \(message.type.name) failed, closing: \(error)")
            close()
        }
    }

    func close(refusal: (Reason, String)? = nil) {
        guard let connection else { return }
        self.connection = nil
        supervisor.loop.cancel(helloTimer)
        helloTimer = nil
        supervisor.loop.unregister(fd)
        if let (reason, message) = refusal {
            connection.refuseAndClose(reason, message: message)
        } else {
            connection.close()
        }
        for reply in openURLReplies.values.joined() { reply(false) }
        openURLReplies.removeAll()
        supervisor.sinkClosed(self)
        if let id = helloIdentifier {
            supervisor.transferEventHosts[id]?.removeAll { $0 === self }
            if supervisor.transferEventHosts[id]?.isEmpty == true { supervisor.transferEventHosts[id] = nil }
        }
        server.sessionClosed(self, fd: fd)
    }
}
