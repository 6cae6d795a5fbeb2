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
    /// Held from start to stop; given by appexd, which takes it before anything else.
    private var socketLock: ControlSocketLock?
    /// The socket file this server bound (device, inode): stop removes only that file.
    private var boundFile: (dev: UInt64, ino: UInt64)?
    var sessions: [Int32: HostSession] = [:]

    public init(supervisor: Supervisor, path: String, authorization: PeerAuthorization, logger: Logger,
                socketLock: ControlSocketLock? = nil) {
        self.supervisor = supervisor
        self.socketLock = socketLock
        self.path = path
        self.authorization = authorization
        self.logger = logger
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
        }
    }

    /// Unlinks `path` only while it is still the socket this server bound: a file someone
    /// else put there since is theirs.
    private func removeBoundFile(_ path: String) {
        var st = stat()
        guard let boundFile, lstat(path, &st) == 0,
              UInt64(st.st_dev) == boundFile.dev, UInt64(st.st_ino) == boundFile.ino else { return }
        unlink(path)
        self.boundFile = nil
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
