// The listening side of the control socket, apart from AppexWireIO so that what an extension
// links (the SDK, through AppexWireIO) holds no listen/accept code: `appex lint-binary` would
// rightly report those imports, which the app-extension-unavailable group denies.
import AppexWireIO
import CAppexLinux

#if canImport(Glibc)
import Glibc
#endif

/// A listening SOCK_SEQPACKET socket bound to a path: appexd's control socket. Binding does
/// not remove an existing file; the owner decides what may be replaced and sets the mode.
public struct WireListener: Hashable, Sendable {
    public let fd: Int32
    public let path: String

    /// A `nonblocking` listener makes `accept` return nil instead of waiting (for an event loop).
    public static func bind(path: String, backlog: Int32 = 128, nonblocking: Bool = false) throws(SocketError) -> WireListener {
        let flags = Int32(SOCK_CLOEXEC.rawValue) | (nonblocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | flags, 0)
        guard fd >= 0 else { throw SocketError.last("socket", path) }
        let bound = try withUnixAddress(path, "bind") { Glibc.bind(fd, $0, $1) }
        if bound != 0 {
            let error = SocketError.last("bind", path)
            _ = Glibc.close(fd)
            throw error
        }
        guard listen(fd, backlog) == 0 else {
            let error = SocketError.last("listen", path)
            _ = Glibc.close(fd)
            throw error
        }
        return WireListener(fd: fd, path: path)
    }

    /// The next connection, close-on-exec (and non-blocking when asked); nil when the listener
    /// is non-blocking and none is waiting.
    public func accept(nonblockingConnection: Bool = false) throws(SocketError) -> WireSocket? {
        while true {
            let c = appex_wire_accept(fd, nonblockingConnection ? 1 : 0)
            if c >= 0 { return WireSocket(adopting: c) }
            switch Glibc.errno {
            case EINTR, ECONNABORTED: continue
            case EAGAIN: return nil
            default: throw SocketError.last("accept4", path)
            }
        }
    }

    public func close() { _ = Glibc.close(fd) }
}
