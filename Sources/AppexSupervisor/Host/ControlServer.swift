import AppexWire
import AppexWireIO
import AppexWireListener
import Foundation
import Logging

/// Who may do what on the control socket, by the uid the kernel reports for the peer
/// (SO_PEERCRED), never by anything the peer writes. appexd's configuration provides it.
public protocol PeerAuthorization: Sendable {
    /// May begin and cancel requests on extensions.
    func mayHost(uid: UInt32) -> Bool
    /// May install, enable, disable and uninstall.
    func mayAdminister(uid: UInt32) -> Bool
    /// May act as the host of containing app `app`: take its extensions' transfer events and
    /// cancel their transfers. The app a host names in Hello is only its word.
    func maySpeak(forApp app: String, uid: UInt32) -> Bool
}

/// appexd's control socket: accepts hosts and the `appex` CLI, one `HostSession` each, all on
/// the supervisor's loop.
public final class ControlServer: @unchecked Sendable {
    public let path: String
    let supervisor: Supervisor
    let authorization: PeerAuthorization
    /// Loop only; `update(limits:)` replaces them while appexd runs.
    private(set) var limits: ClientLimits
    let logger: Logger
    private var listener: WireListener?
    /// Held from start to stop; given by appexd, which takes it before anything else.
    private var socketLock: ControlSocketLock?
    /// The socket file this server bound (device, inode): stop removes only that file.
    private var boundFile: (dev: UInt64, ino: UInt64)?
    var sessions: [Int32: HostSession] = [:]
    /// Open connections by uid, and of each class of client together (ClientLimits).
    private var connectionsByUID: [UInt32: Int] = [:]
    private var connectionsByClass: [ClientClass: Int] = [:]
    /// Held open so that, out of descriptors, appexd can still accept a connection in order
    /// to close it (a pending connection keeps the listener readable and the loop spinning).
    private var reserveFD: Int32 = -1
    private var acceptPaused = false
    private var acceptBackoff: Duration = .zero
    var refusals = RateLimitedLog()

    /// `limits` are fitted to the process's descriptor limit at `start`.
    public init(
        supervisor: Supervisor, path: String, authorization: PeerAuthorization,
        limits: ClientLimits = ClientLimits(), logger: Logger, socketLock: ControlSocketLock? = nil
    ) {
        self.supervisor = supervisor
        self.socketLock = socketLock
        self.path = path
        self.authorization = authorization
        self.limits = Self.fitted(limits)
        self.logger = logger
    }

    private static func fitted(_ limits: ClientLimits) -> ClientLimits {
        ClientLimits.currentDescriptorLimit.map { limits.fitted(toDescriptorLimit: $0) } ?? limits
    }

    /// New limits (appexd's SIGHUP), fitted as at start: they bound the connections and
    /// requests that come after; what is open already stays.
    public func update(limits: ClientLimits) async {
        let fitted = Self.fitted(limits)
        await supervisor.onLoop { [self] _ in self.limits = fitted }
    }

    /// Takes the socket's lock (unless given), binds the socket (replacing a stale socket file
    /// a dead appexd left, never another kind of file), makes it connectable by everyone
    /// (authorization is per uid, by SO_PEERCRED) and starts accepting on the loop.
    public func start() async throws {
        if socketLock == nil { socketLock = try ControlSocketLock(socketPath: path) }
        var st = stat()
        if lstat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFSOCK else {
                throw SupervisorError("bind \(path)", "exists and is not a socket; not replacing it")
            }
            unlink(path)
        }
        let listener = try WireListener.bind(path: path, nonblocking: true)
        chmod(path, 0o666)
        if lstat(path, &st) == 0 { boundFile = (UInt64(st.st_dev), UInt64(st.st_ino)) }
        self.listener = listener
        reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        let result: Result<Void, Error> = await supervisor.onLoop { [self] s in
            Result { try s.loop.register(listener.fd) { [self] in acceptPending() } }
        }
        try result.get()
        logger.info("control socket at \(path)")
    }

    /// Stops accepting and closes every session (their requests are cancelled).
    public func stop() async {
        await supervisor.onLoop { [self] s in
            if let listener {
                s.loop.unregister(listener.fd)
                listener.close()
                removeBoundFile(listener.path)
                self.listener = nil
            }
            socketLock = nil
            for session in sessions.values { session.close() }
            sessions.removeAll()
            if reserveFD >= 0 { Glibc.close(reserveFD) }
            reserveFD = -1
        }
    }

    /// Unlinks `path` only while it is still the socket this server bound: a file someone
    /// else put there since is theirs.
    private func removeBoundFile(_ path: String) {
        var st = stat()
        guard let boundFile, lstat(path, &st) == 0,
            UInt64(st.st_dev) == boundFile.dev, UInt64(st.st_ino) == boundFile.ino
        else { return }
        unlink(path)
        self.boundFile = nil
    }

    private func acceptPending() {
        guard let listener, !acceptPaused else { return }
        let socket: WireSocket
        do {
            guard let accepted = try listener.accept(nonblockingConnection: true) else { return }
            socket = accepted
        } catch  where error.errno == EMFILE || error.errno == ENFILE {
            shedOneConnection(listener, error)
            return
        } catch {
            refusals.warning(logger, key: "control: accept failed", "control: accept failed: \(error)")
            return
        }
        acceptBackoff = .zero
        let peer: PeerCredentials
        do {
            peer = try socket.peerCredentials()
        } catch {
            refusals.warning(logger, key: "control: no peer credentials", "control: no peer credentials, closing: \(error)")
            socket.close()
            return
        }
        if let (reason, refusal) = admissionRefusal(peer) {
            refusals.warning(
                logger, key: "control: refused uid \(peer.uid)",
                "control: refused a connection of pid \(peer.pid) uid \(peer.uid): \(refusal)")
            supervisor.metrics.refusal(reason: reason.rawValue)
            WireConnection(socket: socket, role: .service).refuseAndClose(reason, message: refusal)
            return
        }
        let session = HostSession(server: self, socket: socket, peer: peer)
        do {
            try supervisor.loop.register(socket.fd) { [weak session] in session?.readable() }
            sessions[socket.fd] = session
            opened(session)
        } catch {
            socket.close()
            logger.error("control: cannot watch a new connection: \(error)")
        }
    }

    /// Whether administrators are exempt from the others' bounds.
    func isAdministrator(_ uid: UInt32) -> Bool { authorization.mayAdminister(uid: uid) }

    /// Who a uid is to the bounds: each class is counted apart, so strangers never crowd out
    /// hosts, and neither crowds out administrators.
    enum ClientClass { case administrator, host, stranger }

    func clientClass(_ uid: UInt32) -> ClientClass {
        if authorization.mayAdminister(uid: uid) { return .administrator }
        return authorization.mayHost(uid: uid) ? .host : .stranger
    }

    /// Why a new connection of `peer` is refused, or nil when it may stay.
    private func admissionRefusal(_ peer: PeerCredentials) -> (Reason, String)? {
        let open = connectionsByUID[peer.uid, default: 0]
        let kind = clientClass(peer.uid)
        let all = connectionsByClass[kind, default: 0]
        switch kind {
        case .administrator:
            guard open < limits.connectionsPerAdministrator else {
                return (.busy, "uid \(peer.uid) has \(open) connections open, the most an administrator may")
            }
        case .host:
            guard open < limits.connectionsPerUID else {
                return (
                    .busy, "uid \(peer.uid) has \(open) connections open, the most one host may (appexd configuration: clients.connectionsPerUser)"
                )
            }
            guard all < limits.connections else {
                return (.busy, "appexd has \(all) host connections open, the most it takes (clients.connections); try again later")
            }
        case .stranger:
            guard open < limits.connectionsPerStranger, all < limits.strangerConnections else {
                return (.notAuthorized, "uid \(peer.uid) may neither host nor administer (appexd configuration)")
            }
        }
        return nil
    }

    private func opened(_ session: HostSession) {
        let uid = session.peer.uid
        connectionsByUID[uid, default: 0] += 1
        // Counted where it was admitted, even if the authorization changes while it is open.
        session.countedAs = clientClass(uid)
        connectionsByClass[session.countedAs, default: 0] += 1
        session.helloTimer = supervisor.loop.schedule(after: limits.helloTimeout) { [weak session, self] in
            guard let session else { return }
            session.helloTimer = nil
            refusals.warning(logger, key: "control: no Hello", "control: \(session.label) sent no Hello in time, closing")
            session.close(refusal: (.protocolError, "no Hello within \(limits.helloTimeout)"))
        }
    }

    /// Out of descriptors: the pending connection is accepted on the reserve descriptor and
    /// closed at once, and accepting pauses (doubling up to 2 s) so the loop does not spin
    /// while the descriptors stay taken.
    private func shedOneConnection(_ listener: WireListener, _ error: SocketError) {
        refusals.warning(
            logger, key: "control: out of descriptors",
            "control: out of descriptors (\(error)); refusing connections for a while")
        if reserveFD >= 0 {
            Glibc.close(reserveFD)
            if let shed = try? listener.accept(nonblockingConnection: true) { shed.close() }
            reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        }
        acceptBackoff = min(max(acceptBackoff * 2, .milliseconds(50)), .seconds(2))
        acceptPaused = true
        supervisor.loop.unregister(listener.fd)
        _ = supervisor.loop.schedule(after: acceptBackoff) { [self] in
            acceptPaused = false
            guard let current = self.listener, current.fd == listener.fd else { return }
            do {
                try supervisor.loop.register(listener.fd) { [self] in acceptPending() }
            } catch {
                logger.error("control: cannot watch the control socket again: \(error)")
            }
        }
    }

    func sessionClosed(_ session: HostSession, fd: Int32) {
        guard sessions.removeValue(forKey: fd) != nil else { return }
        let uid = session.peer.uid
        let open = connectionsByUID[uid, default: 1] - 1
        connectionsByUID[uid] = open > 0 ? open : nil
        connectionsByClass[session.countedAs, default: 1] -= 1
    }
}
