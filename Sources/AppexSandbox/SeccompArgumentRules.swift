import AppexPolicyCore

/// Calls the filter judges by an argument, not only by number: each has a dangerous use
/// beside an everyday one, and denying the call outright would break ordinary programs.
/// See Docs/policies.md ("Calls judged by their arguments").
enum SeccompArgumentRules {
    /// The `clone` flags that create namespaces: `CLONE_NEWNS`, `CLONE_NEWCGROUP`,
    /// `CLONE_NEWUTS`, `CLONE_NEWIPC`, `CLONE_NEWUSER`, `CLONE_NEWPID`, `CLONE_NEWNET`.
    /// `CLONE_NEWTIME` (0x80) is not among them: in `clone` that bit is part of the exit
    /// signal, and the kernel takes `CLONE_NEWTIME` only from `clone3` and `unshare`.
    static let cloneNamespaceFlags: [UInt64] = [
        0x0002_0000, 0x0200_0000, 0x0400_0000, 0x0800_0000, 0x1000_0000, 0x2000_0000, 0x4000_0000,
    ]
    static var cloneNamespaceMask: UInt64 { cloneNamespaceFlags.reduce(0, |) }

    /// The argument holding `clone`'s flags: the first on x86_64 and aarch64 (s390, which
    /// swaps the first two, is not a supported architecture).
    static let cloneFlagsArgument: UInt32 = 0

    /// `personality` values that change nothing a sandbox cares about: `PER_LINUX`,
    /// `PER_LINUX32`, `UNAME26` alone and with `PER_LINUX32`, and the query `0xffffffff`.
    /// Everything else (`ADDR_NO_RANDOMIZE` turns off ASLR for what the extension executes,
    /// `READ_IMPLIES_EXEC` makes readable memory executable, foreign personas) gets the
    /// policy's action. Compared as full 64-bit values, so a value with high bits set is
    /// refused even when the kernel would read only its low 32.
    static let harmlessPersonalities: [UInt64] = [0x0000_0000, 0x0000_0008, 0x0002_0000, 0x0002_0008, 0xffff_ffff]

    /// The address families `socket` may create: `AF_UNIX` always; `AF_INET`, `AF_INET6` and
    /// `AF_NETLINK` only with the host network. Every other family gets `EAFNOSUPPORT`, a
    /// kernel's answer for a family it lacks: several ignore network namespaces (`AF_VSOCK`
    /// reaches the hypervisor and other guests, `AF_BLUETOOTH`, `AF_ALG` the kernel's crypto),
    /// and in a private network namespace the extension has no network to use the others
    /// on (netlink would still bring it the host's uevents). Compared as 64-bit values, so a
    /// family with high bits set is refused.
    static func socketFamilies(hostNetwork: Bool) -> [UInt64] {
        hostNetwork ? [1, 2, 10, 16] : [1]
    }

    /// `socketpair` makes only `AF_UNIX` pairs on Linux; any other family gets the same answer.
    static let socketpairFamilies: [UInt64] = [1]

    static let unsupportedFamilyAction = SyscallAction.errno(97)  // EAFNOSUPPORT
}
