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
}

/// appexd's control socket: accepts hosts and the `appex` CLI, one `HostSession` each, all on
/// the supervisor's loop.
public final class ControlServer: @unchecked Sendable {
    public let path: String
    let supervisor: Supervisor
    let authorization: PeerAuthorization
    let logger: Logger
    private var listener: WireListener?
    var sessions: [Int32: HostSession] = [:]

    public init(supervisor: Supervisor, path: String, authorization: PeerAuthorization, logger: Logger) {
        self.supervisor = supervisor
        self.path = path
        self.authorization = authorization
        self.logger = logger
    }

    /// Binds the socket (replacing a stale socket file a dead appexd left, never another kind
    /// of file), makes it connectable by everyone (authorization is per uid, by SO_PEERCRED)
    /// and starts accepting on the loop.
    public func start() async throws {
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        var st = stat()
        if lstat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFSOCK else {
                throw SupervisorError("bind \(path)", "exists and is not a socket; not replacing it")
            }
            unlink(path)
        }
        let listener = try WireListener.bind(path: path, nonblocking: true)
        chmod(path, 0o666)
        self.listener = listener
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
                unlink(listener.path)
                self.listener = nil
            }
            for session in sessions.values { session.close() }
            sessions.removeAll()
        }
    }

    private func acceptPending() {
        guard let listener else { return }
        do {
            guard let socket = try listener.accept(nonblockingConnection: true) else { return }
            let peer: PeerCredentials
            do {
                peer = try socket.peerCredentials()
            } catch {
                logger.warning("control: no peer credentials, closing: \(error)")
                socket.close()
                return
            }
            let session = HostSession(server: self, socket: socket, peer: peer)
            do {
                try supervisor.loop.register(socket.fd) { [weak session] in session?.readable() }
                sessions[socket.fd] = session
            } catch {
                socket.close()
                logger.error("control: cannot watch a new connection: \(error)")
            }
        } catch {
            logger.error("control: accept failed: \(error)")
        }
    }

    func sessionClosed(_ session: HostSession, fd: Int32) {
        sessions.removeValue(forKey: fd)
    }
}
