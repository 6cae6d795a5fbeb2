import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One supervisor's hold on its parent cgroup: a `flock` on the parent's directory (the
/// first hierarchy's), held for the supervisor's life. A second supervisor given the same
/// parent is refused instead of sweeping the first one's extensions and resetting its
/// budget; the kernel drops the lock when the holder dies, so a dead one's parent can be
/// claimed and swept.
public final class CgroupParentClaim: Sendable {
    public let path: String
    private let fd: Mutex<Int32>

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = Mutex(fd)
    }

    /// Lets another supervisor claim the parent (after this one's extensions are gone).
    public func release() {
        fd.withLock { fd in
            if fd >= 0 { Sys.close(fd) }
            fd = -1
        }
    }

    deinit { release() }

    /// Makes the parent if missing and claims it, or throws (EWOULDBLOCK: another
    /// supervisor holds it).
    static func claim(_ manager: CgroupManager) throws -> CgroupParentClaim {
        try manager.prepare()
        guard let claim = try tryClaim(manager) else {
            throw CgroupError(
                "claim", path: manager.parentPaths[0], errno: .resourceTemporarilyUnavailable,
                message: "another supervisor uses this cgroup parent")
        }
        return claim
    }

    /// Claims an existing parent; nil when another supervisor holds it or it is gone.
    static func tryClaim(_ manager: CgroupManager) throws -> CgroupParentClaim? {
        let path = manager.parentPaths[0]
        let fd: Int32
        do {
            fd = try Sys.open(path, O_RDONLY | Sys.O_DIRECTORY)
        } catch let e as CgroupError where e.errno == .noSuchFileOrDirectory {
            return nil
        }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = Glibc.errno
            if e == EINTR { continue }
            Sys.close(fd)
            if e == EWOULDBLOCK { return nil }
            throw Sys.fail("flock", path)
        }
        return CgroupParentClaim(path: path, fd: fd)
    }
}

extension CgroupManager {
    /// Claims the parent for this process (see `CgroupParentClaim`); hold the result for as
    /// long as extensions run under it, and sweep leftovers only after it is claimed.
    public func claimParent() throws -> CgroupParentClaim {
        try CgroupParentClaim.claim(self)
    }

    /// Claims the parent only when nobody holds it; nil otherwise.
    public func claimParentIfFree() throws -> CgroupParentClaim? {
        try CgroupParentClaim.tryClaim(self)
    }
}
