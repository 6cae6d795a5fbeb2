import AppexPolicy

#if canImport(Glibc)
import Glibc
#endif

/// User names to uids, through the C library (so NSS sources such as LDAP count too).
enum UserDatabase {
    /// The uid of `name`, or nil when there is no such user. A failure of the lookup itself
    /// (not "not found") is reported at `node`.
    static func uid(ofUser name: String, at node: YAMLNode) throws -> UInt32? {
        var size = max(Int(sysconf(Int32(_SC_GETPW_R_SIZE_MAX))), 1024)
        while true {
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: size)
            let rc = getpwnam_r(name, &entry, &buffer, size, &result)
            if rc == ERANGE && size < 1 << 20 {
                size *= 4
                continue
            }
            if let result { return result.pointee.pw_uid }
            // getpwnam_r(3): 0, ENOENT, ESRCH, EBADF and EPERM all mean "no such user".
            if [0, ENOENT, ESRCH, EBADF, EPERM].contains(rc) { return nil }
            throw node.error("looking up user \"\(name)\" failed: \(String(cString: strerror(rc)))")
        }
    }
}
