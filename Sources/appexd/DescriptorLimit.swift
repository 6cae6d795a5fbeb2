import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// appexd holds about a dozen descriptors per live extension (its socket, pidfds, the log
/// pipe and file, the footprint and OOM eventfds, the seccomp listener). The soft
/// RLIMIT_NOFILE a service starts with is often 1,024 (systemd's default, kept low for
/// programs that still use select(2)), which would cap appexd near 80 extensions; the hard
/// limit is the administrator's real ceiling. appexd uses epoll only, so it raises its soft
/// limit to the hard one, as systemd itself does for its own processes. Extensions never
/// inherit it: the launch sets each one's RLIMIT_NOFILE from its policy.
enum DescriptorLimit {
    /// The soft limit after raising it (unchanged when it already was the hard one).
    @discardableResult
    static func raiseToHard() -> (soft: UInt64, hard: UInt64)? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }
}
