import AppexWireIO

#if canImport(Glibc)
import Glibc
#endif

/// The service manager's notification protocol (systemd's sd_notify), without libsystemd: one
/// datagram of newline-separated `KEY=value` assignments sent to the AF_UNIX socket named by
/// `$NOTIFY_SOCKET`. appexd sends `READY=1` once its control socket listens, `STATUS=...` as
/// things change, and `STOPPING=1` when it begins to shut down.
///
/// ```swift
/// try SDNotify.notify("READY=1\nSTATUS=listening on /run/appex/appexd.sock")
/// ```
///
/// Extensions must not inherit `NOTIFY_SOCKET`: the launcher gives them an environment of
/// their own, and the socket is not visible in their filesystem view.
public enum SDNotify {
    public static let environmentVariable = "NOTIFY_SOCKET"

    /// Sends `state` to the socket named by `$NOTIFY_SOCKET`.
    ///
    /// - Returns: false, having sent nothing, when the variable is unset or empty (not started
    ///   by a service manager that listens, e.g. run by hand or with `Type=simple`).
    /// - Throws: `SocketError` naming the call that failed and the socket.
    @discardableResult
    public static func notify(_ state: String) throws(SocketError) -> Bool {
        try notify(state, environmentValue: getenv(environmentVariable).map { String(cString: $0) })
    }

    static func notify(_ state: String, environmentValue: String?) throws(SocketError) -> Bool {
        guard let address = environmentValue, !address.isEmpty else { return false }
        try notify(state, socket: address)
        return true
    }

    /// Sends `state` to the notification socket at `address`: an absolute path, or `@name`
    /// for a socket in the abstract namespace.
    public static func notify(_ state: String, socket address: String) throws(SocketError) {
        let context = "\(environmentVariable)=\(address)"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket(AF_UNIX, SOCK_DGRAM)", errno: errno, context: context) }
        defer { close(fd) }
        let sent = try withNotifyAddress(address, context: context) { addr, length in
            var bytes = Array(state.utf8)
            while true {
                let n = sendto(fd, &bytes, bytes.count, Int32(MSG_NOSIGNAL), addr, length)
                if n >= 0 || errno != EINTR { return n >= 0 ? n : -Int(errno) }
            }
        }
        if sent < 0 { throw SocketError("sendto", errno: Int32(-sent), context: context) }
        if sent != state.utf8.count {
            throw SocketError("sendto", errno: EMSGSIZE, context: "\(context): sent \(sent) of \(state.utf8.count) bytes")
        }
    }

    /// A sockaddr_un for a path (`/run/systemd/notify`) or an abstract name (`@name`: a NUL
    /// first, and a length that counts only the name's bytes, which is how the kernel tells
    /// abstract names apart).
    private static func withNotifyAddress<R>(
        _ address: String, context: String,
        _ body: (UnsafePointer<sockaddr>, socklen_t) -> R
    ) throws(SocketError) -> R {
        var name = Array(address.utf8)
        let abstract = name.first == UInt8(ascii: "@")
        guard abstract || name.first == UInt8(ascii: "/") else {
            throw SocketError("notify", errno: EINVAL, context: "\(context): neither an absolute path nor an @abstract name")
        }
        if abstract { name[0] = 0 }
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        // A path needs room for its NUL; an abstract name may fill sun_path.
        guard name.count <= (abstract ? capacity : capacity - 1), abstract || !name.contains(0) else {
            throw SocketError("notify", errno: ENAMETOOLONG, context: "\(context): longer than sun_path or contains NUL")
        }
        withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: name) }
        let length = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + name.count + (abstract ? 0 : 1)
        return withUnsafePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }
}
