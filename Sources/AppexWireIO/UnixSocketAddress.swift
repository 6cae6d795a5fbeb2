#if canImport(Glibc)
import Glibc
#endif

/// Fills a sockaddr_un for `path` and runs `body` with it. Paths longer than sun_path (107
/// bytes plus NUL) are refused rather than cut.
package func withUnixAddress<R>(
    _ path: String, _ operation: String,
    _ body: (UnsafePointer<sockaddr>, socklen_t) -> R
) throws(SocketError) -> R {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
        throw SocketError(
            operation, errno: ENAMETOOLONG,
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
