import CSeccomp

/// Syscall names as libseccomp knows them for this machine's architecture, so a policy that
/// names a call the kernel does not have is refused, never silently ignored.
public enum SyscallNames {
    /// The native syscall number, or nil when libseccomp does not know the name. Names
    /// libseccomp knows but this architecture lacks resolve to a negative pseudo-number.
    public static func number(_ name: String) -> Int32? {
        let n = seccomp_syscall_resolve_name(name)
        return n == __NR_SCMP_ERROR ? nil : n
    }

    public static func isKnown(_ name: String) -> Bool { number(name) != nil }
}
