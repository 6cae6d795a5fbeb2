#if canImport(Glibc)
import Glibc
#endif

/// Who is at the other end of a connected Unix socket, as the kernel recorded it when the
/// connection was made (or the socketpair created). Unforgeable by the peer.
public struct PeerCredentials: Equatable, Sendable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
}

/// `struct ucred` (pid_t, uid_t, gid_t): Swift's Glibc hides it behind _GNU_SOURCE; its layout
/// is the kernel ABI.
private struct UCred {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

extension WireSocket {
    /// SO_PEERCRED of the connected socket.
    public func peerCredentials() throws(SocketError) -> PeerCredentials {
        var cred = UCred()
        var length = socklen_t(MemoryLayout<UCred>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) == 0 else {
            throw SocketError.last("getsockopt(SO_PEERCRED)")
        }
        guard length == socklen_t(MemoryLayout<UCred>.size) else {
            throw SocketError("getsockopt(SO_PEERCRED)", errno: EPROTO, context: "returned \(length) bytes")
        }
        return PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid)
    }
}

extension WireSocket {
    /// SO_PEERGROUPS: the peer's supplementary groups when it connected, as SO_PEERCRED's
    /// uid and gid are.
    public func peerGroups() throws(SocketError) -> [UInt32] {
        var groups = [UInt32](repeating: 0, count: 64)
        while true {
            var length = socklen_t(groups.count * MemoryLayout<UInt32>.size)
            if getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, &groups, &length) == 0 {
                return Array(groups.prefix(Int(length) / MemoryLayout<UInt32>.size))
            }
            // ERANGE: the kernel said how much room the list needs.
            guard errno == ERANGE, Int(length) > groups.count * MemoryLayout<UInt32>.size else {
                throw SocketError.last("getsockopt(SO_PEERGROUPS)")
            }
            groups = [UInt32](repeating: 0, count: Int(length) / MemoryLayout<UInt32>.size)
        }
    }
}
