import AppexPolicy
import CAppexLauncher
import CSeccomp
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A compiled filter: classic BPF for `SECCOMP_SET_MODE_FILTER`, ready to hand to the launcher.
public struct SeccompProgram: Sendable, Equatable {
    /// `struct sock_filter[]` as exported by libseccomp.
    public var bytes: [UInt8]
    public var instructionCount: Int { bytes.count / 8 }
    /// Whether any rule uses the notify action (the launcher then passes a listener back).
    public var usesNotify: Bool
    /// For the notifier: syscall number → errno to answer.
    public var notifyErrnos: [Int32: Int32]
    /// The canonical rule list the program was compiled from (the cache key).
    public var canonicalRules: String
    /// FNV-1a 64 of `canonicalRules`, for logs and file names.
    public var digest: UInt64
}

/// Compiles denied-syscall rules into BPF with libseccomp, once per distinct rule set.
///
/// Default action: allow. Each rule denies one syscall with its action. Unknown syscall
/// names are an error. Syscalls the launcher itself needs after the filter is loaded
/// (`execve`; `sendmsg` on its notify socket) cannot be denied — see Docs/launch-sequence.md.
public enum SeccompCompiler {
    private static let cache = Protected<[String: SeccompProgram]>([:])

    /// Calls the launcher makes after loading the filter: denying them would stop the launch.
    static let launcherNeeds: Set<String> = ["execve", "exit", "exit_group"]

    public static func compile(_ rules: [SeccompRule]) throws -> SeccompProgram {
        let canonical = try canonicalize(rules)
        if let hit = cache.withLock({ $0[canonical] }) { return hit }
        let program = try build(rules: canonical.isEmpty ? [] : uniqueRules(rules), canonical: canonical)
        cache.withLock { $0[canonical] = program }
        return program
    }

    /// Entries in the process-wide cache (for tests and metrics).
    public static var cachedCount: Int { cache.withLock { $0.count } }

    /// Sorted `name action` lines: equal rule sets compile once, whatever their order.
    static func canonicalize(_ rules: [SeccompRule]) throws -> String {
        var seen: [String: SyscallAction] = [:]
        for r in rules {
            if let prior = seen[r.syscall], prior != r.action {
                throw SandboxError("compile seccomp filter", message: "syscall \(r.syscall) has two actions: \(prior) and \(r.action)")
            }
            seen[r.syscall] = r.action
        }
        return seen.keys.sorted().map { "\($0) \(seen[$0]!)" }.joined(separator: "\n")
    }

    static func uniqueRules(_ rules: [SeccompRule]) -> [SeccompRule] {
        var seen = Set<String>()
        return rules.filter { seen.insert($0.syscall).inserted }.sorted { $0.syscall < $1.syscall }
    }

    static func actionValue(_ a: SyscallAction) -> UInt32 {
        switch a {
        case .errno(let e): return 0x0005_0000 | (UInt32(bitPattern: e) & 0xffff)  // SCMP_ACT_ERRNO(e)
        case .kill: return 0x8000_0000  // SCMP_ACT_KILL_PROCESS
        case .log: return 0x7ffc_0000  // SCMP_ACT_LOG
        case .notify: return 0x7fc0_0000  // SCMP_ACT_NOTIFY
        }
    }

    private static func build(rules: [SeccompRule], canonical: String) throws -> SeccompProgram {
        guard let ctx = seccomp_init(0x7fff_0000) else {  // SCMP_ACT_ALLOW
            throw SandboxError("seccomp_init", errno: .noMemory)
        }
        defer { seccomp_release(ctx) }
        // Another architecture's syscall table (i386 via int 0x80, x32) would bypass the
        // rules: such calls kill the process.
        _ = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, 0x8000_0000)
        // Binary search over syscall numbers instead of a linear chain.
        _ = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)

        let usesNotify = rules.contains { if case .notify = $0.action { return true } else { return false } }
        if usesNotify && seccomp_api_get() < 5 {
            throw SandboxError("compile seccomp filter", errno: .notSupported,
                               message: "the notify action needs libseccomp API level 5 (kernel 5.0+)")
        }
        var notifyErrnos: [Int32: Int32] = [:]
        for rule in rules {
            let nr = seccomp_syscall_resolve_name(rule.syscall)
            if nr == __NR_SCMP_ERROR {
                throw SandboxError("compile seccomp filter", errno: .invalidArgument,
                                   message: "unknown syscall \"\(rule.syscall)\"")
            }
            if launcherNeeds.contains(rule.syscall), rule.action != .log {
                throw SandboxError("compile seccomp filter", errno: .invalidArgument,
                                   message: "\(rule.syscall) cannot be denied: the launcher calls it after loading the filter")
            }
            var rc: Int32
            if usesNotify && rule.syscall == "sendmsg" {
                // The child hands the listener over with sendmsg on this fd after loading the filter.
                var cmp = scmp_arg_cmp(arg: 0, op: SCMP_CMP_NE, datum_a: UInt64(APPEX_NOTIFY_SOCK_FD), datum_b: 0)
                rc = seccomp_rule_add_array(ctx, actionValue(rule.action), nr, 1, &cmp)
            } else {
                rc = seccomp_rule_add_array(ctx, actionValue(rule.action), nr, 0, nil)
            }
            if rc < 0 {
                throw SandboxError("add seccomp rule", errno: Errno(rawValue: -rc), message: "\(rule.syscall) \(rule.action)")
            }
            if case .notify(let e) = rule.action, nr >= 0 { notifyErrnos[nr] = e }
        }

        let fd = appex_memfd("appex-seccomp")
        if fd < 0 { throw Sys.fail("memfd_create") }
        defer { Sys.close(fd) }
        let rc = seccomp_export_bpf(ctx, fd)
        if rc < 0 { throw SandboxError("seccomp_export_bpf", errno: Errno(rawValue: -rc)) }
        if lseek(fd, 0, SEEK_SET) < 0 { throw Sys.fail("lseek") }
        let bytes = try Sys.readAll(fd: fd)
        guard !bytes.isEmpty, bytes.count % 8 == 0, bytes.count / 8 <= 4096 else {
            throw SandboxError("seccomp_export_bpf", errno: .invalidArgument, message: "unexpected program size \(bytes.count)")
        }
        return SeccompProgram(bytes: bytes, usesNotify: usesNotify, notifyErrnos: notifyErrnos,
                              canonicalRules: canonical, digest: fnv1a(canonical))
    }

    static func fnv1a(_ s: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in s.utf8 {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return h
    }
}
