import CAppexLinux

#if canImport(Glibc)
import Glibc
#endif

/// Switches the calling thread's filesystem identity (fsuid, fsgid, supplementary groups) to
/// another user's around single calls, and back. Linux keeps these per thread, and moving
/// fsuid from 0 to another uid drops the thread's CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH:
/// opens then fail with EACCES exactly as they would for that user, while every other thread
/// of the process stays root. Used only on the thread that made it (it gives back that
/// thread's own identity), and only around calls that start no thread (one would inherit it).
struct ThreadFileIdentity {
    let identity: FileIdentity
    private let ownUID: UInt32
    private let ownGID: UInt32
    private let ownGroups: [gid_t]

    /// Checks that this thread can take `identity` and give it back (we are root); throws
    /// otherwise, naming the uid.
    init(_ identity: FileIdentity) throws {
        self.identity = identity
        ownUID = appex_thread_setfsuid(UInt32.max)
        ownGID = appex_thread_setfsgid(UInt32.max)
        let count = getgroups(0, nil)
        var groups = [gid_t](repeating: 0, count: Int(max(count, 0)))
        if count < 0 || getgroups(count, &groups) != count {
            throw RegistryError.system(operation: "read the thread's groups", path: "", errno: errno)
        }
        ownGroups = groups
        let taken = (try? take()) ?? false
        restore()
        guard taken else {
            throw RegistryError.system(
                operation: "read the source as \(identity) (appexd must run as root)", path: "",
                errno: EPERM)
        }
    }

    /// Runs `body` (one or a few system calls on this thread) with the user's identity; the
    /// thread's own is back before this returns, with `errno` as `body` left it.
    func callAsFunction<T>(_ body: () throws -> T) throws -> T {
        guard try take() else {
            restore()
            throw RegistryError.system(operation: "read the source as \(identity)", path: "", errno: EPERM)
        }
        defer {
            let code = errno
            restore()
            errno = code
        }
        return try body()
    }

    /// Takes the user's identity; whether the thread now has it.
    private func take() throws -> Bool {
        let groups = identity.groups.map { gid_t($0) }
        if appex_thread_setgroups(groups.count, groups) != 0 {
            throw RegistryError.system(operation: "set the groups of \(identity)", path: "", errno: errno)
        }
        _ = appex_thread_setfsgid(identity.gid)
        _ = appex_thread_setfsuid(identity.uid)
        return appex_thread_setfsuid(UInt32.max) == identity.uid && appex_thread_setfsgid(UInt32.max) == identity.gid
    }

    /// Gives the thread its own identity back. Failing that, the process would go on with a
    /// thread that is not what it believes: stop instead.
    private func restore() {
        _ = appex_thread_setfsuid(ownUID)
        _ = appex_thread_setfsgid(ownGID)
        let restored = appex_thread_setgroups(ownGroups.count, ownGroups) == 0
        precondition(
            restored && appex_thread_setfsuid(UInt32.max) == ownUID && appex_thread_setfsgid(UInt32.max) == ownGID,
            "could not restore the thread's file-system identity")
    }
}
