import CAppexWireIO
#if canImport(Glibc)
import Glibc
#endif

/// Fills a sockaddr_un for `path` and runs `body` with it. Paths longer than sun_path (107
/// bytes plus NUL) are refused rather than cut.
func withUnixAddress<R>(_ path: String, _ operation: String,
                        _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) throws(SocketError) -> R {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
        throw SocketError(operation, errno: ENAMETOOLONG,
                          context: "\(path): a socket path is 1 to \(capacity - 1) bytes without NUL")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
    }
    return withUnsafePointer(to: &address) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

extension WireSocket {
    /// Connects to a listening SOCK_SEQPACKET socket (the control socket of appexd).
    public static func connect(path: String) throws(SocketError) -> WireSocket {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError.last("socket", path) }
        while true {
            let rc = try withUnixAddress(path, "connect") { Glibc.connect(fd, $0, $1) }
            if rc == 0 { return WireSocket(adopting: fd) }
            if Glibc.errno == EINTR { continue }
            let error = SocketError.last("connect", path)
            _ = Glibc.close(fd)
            throw error
        }
    }
}

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
