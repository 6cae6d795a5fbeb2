import CSeccomp

#if canImport(Glibc)
import Glibc
#endif

/// Syscall names as libseccomp knows them for this machine's architecture, plus the calls
/// newer than its table (`NewerSyscalls`), so a policy that names a call the kernel does not
/// have is refused, never silently ignored.
public enum SyscallNames {
    /// The native syscall number, or nil when neither libseccomp nor Appex knows the name.
    /// Names libseccomp knows but this architecture lacks resolve to a negative pseudo-number.
    public static func number(_ name: String) -> Int32? {
        let n = seccomp_syscall_resolve_name(name)
        if n != __NR_SCMP_ERROR { return n }
        return newer[name]
    }

    public static func isKnown(_ name: String) -> Bool { number(name) != nil }

    /// The name of a native syscall number, or nil for a number nobody here knows.
    public static func name(_ number: Int32) -> String? {
        if let c = seccomp_syscall_resolve_num_arch(native, number) {
            defer { free(c) }
            return String(cString: c)
        }
        return NewerSyscalls.native.first { $0.number == number }?.name
    }

    /// Every native syscall number libseccomp or Appex can name, ascending: what a
    /// default-deny filter lets through unless a policy denies it.
    public static let knownNumbers: [Int32] = {
        var numbers = Set(NewerSyscalls.native.map(\.number))
        // libseccomp's tables stop well below 1024 on every 64-bit architecture.
        for nr: Int32 in 0..<1024 {
            if let c = seccomp_syscall_resolve_num_arch(native, nr) {
                free(c)
                numbers.insert(nr)
            }
        }
        return numbers.sorted()
    }()

    private static let native = seccomp_arch_native()

    private static let newer: [String: Int32] =
        Dictionary(NewerSyscalls.native.map { ($0.name, $0.number) }, uniquingKeysWith: { a, _ in a })
}
