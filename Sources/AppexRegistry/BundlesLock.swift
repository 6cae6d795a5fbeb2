#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on `<state>/bundles/.lock`, held while installed copies change
/// (install, uninstall, recovery). Each holder opens its own file description, so threads of
/// one process exclude each other as processes do; the kernel drops it when a holder dies.
enum BundlesLock {
    static func withLock<T>(bundles: Int32, path: String, _ body: () throws -> T) throws -> T {
        let fd = Registry.lockName.withCString {
            openat(bundles, $0, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        if fd < 0 { throw DirectoryFD.fail("open lock", path) }
        defer { DirectoryFD.close(fd) }  // closing the last fd releases the lock
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { throw DirectoryFD.fail("lock", path) }
        }
        return try body()
    }
}
