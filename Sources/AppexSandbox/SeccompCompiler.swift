import AppexPolicyCore
import AppexStateDirectory
import CAppexLauncher
import CAppexLinux
import CSeccomp
import Synchronization
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
/// Every syscall number Appex knows (libseccomp's table plus `NewerSyscalls`) is allowed unless
/// a rule denies it; any other number gets `ENOSYS`, the kernel's own answer for a call it
/// lacks, so a call added by a newer kernel stays out until Appex names it. Each rule denies
/// one syscall with its action; a few calls are judged by their arguments
/// (`SeccompArgumentRules`). libseccomp builds the rules with allow as the default; the
/// unknown numbers are answered by `SeccompPrelude`, a few comparisons placed before it.
/// Unknown syscall names are an error. Syscalls the launcher itself needs after the filter is
/// loaded cannot be denied — see Docs/launch-sequence.md and Docs/policies.md.
public enum SeccompCompiler {
    private static let cache = Mutex<[String: SeccompProgram]>([:])

    /// Calls the launcher makes after loading the filter: denying them would stop the launch.
    static let launcherNeeds: Set<String> = ["execve", "execveat", "exit", "exit_group", "rt_sigprocmask"]

    /// What a syscall number no policy and no table names gets.
    static let unknownSyscallAction = SyscallAction.errno(ENOSYS)

    /// The largest program the filter may become (the kernel's BPF_MAXINSNS).
    static let maxInstructions = 4096

    /// The program for `rules`: from this process's cache, else from the cache on disk
    /// (SeccompProgramCache, beside the compiled policies), else built with libseccomp.
    /// `hostNetwork`: the extension shares the host's network, and `socket` may create the
    /// families it needs (`SeccompArgumentRules.socketFamilies`).
    public static func compile(_ rules: [SeccompRule], hostNetwork: Bool = false) throws -> SeccompProgram {
        let canonical = try canonicalize(rules, hostNetwork: hostNetwork)
        if let hit = cache.withLock({ $0[canonical] }) { return hit }
        let program = try compileOrLoad(
            rules, cacheDirectory: PolicyCache.directory(), canonical: canonical,
            hostNetwork: hostNetwork
        ).program
        cache.withLock { $0[canonical] = program }
        return program
    }

    /// `compile` without this process's cache (for tests and policy-bench): the program from
    /// `cacheDirectory` when it holds it (nil: never), else built and stored there; and whether
    /// it came from disk.
    public static func compileOrLoad(
        _ rules: [SeccompRule], cacheDirectory: String?,
        hostNetwork: Bool = false
    ) throws -> (program: SeccompProgram, fromDisk: Bool) {
        try compileOrLoad(
            rules, cacheDirectory: cacheDirectory, canonical: canonicalize(rules, hostNetwork: hostNetwork),
            hostNetwork: hostNetwork)
    }

    static func compileOrLoad(
        _ rules: [SeccompRule], cacheDirectory: String?,
        canonical: String, hostNetwork: Bool
    ) throws -> (program: SeccompProgram, fromDisk: Bool) {
        if let dir = cacheDirectory, let stored = SeccompProgramCache.read(canonical: canonical, directory: dir) {
            return (stored, true)
        }
        let program = try build(rules: uniqueRules(rules), canonical: canonical, hostNetwork: hostNetwork)
        if let dir = cacheDirectory { SeccompProgramCache.write(program, directory: dir) }
        return (program, false)
    }

    /// Entries in the process-wide cache (for tests and metrics).
    public static var cachedCount: Int { cache.withLock { $0.count } }

    /// Sorted `name action` lines: equal rule sets compile once, whatever their order. It is
    /// the cache key of every `appex run`, so it sorts the rules (stably: of two rules for
    /// one syscall, the earlier one is named first in the error) and merges neighbours,
    /// rather than hashing every name into a dictionary and sorting its keys.
    static func canonicalize(_ rules: [SeccompRule], hostNetwork: Bool) throws -> String {
        // The socket families follow the network, so they are part of the key.
        try canonicalize(rules) + (hostNetwork ? "\n@network host" : "\n@network none")
    }

    static func canonicalize(_ rules: [SeccompRule]) throws -> String {
        let order = rules.indices.sorted { a, b in
            rules[a].syscall == rules[b].syscall ? a < b : rules[a].syscall < rules[b].syscall
        }
        var out = ""
        out.reserveCapacity(rules.count * 24)
        var kept: SeccompRule?
        for i in order {
            let r = rules[i]
            if let prior = kept, prior.syscall == r.syscall {
                guard prior.action == r.action else {
                    throw SandboxError("compile seccomp filter", message: "syscall \(r.syscall) has two actions: \(prior.action) and \(r.action)")
                }
                continue
            }
            if kept != nil { out += "\n" }
            out += r.syscall
            out += " "
            out += r.action.description
            kept = r
        }
        return out
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

    static let allowAction: UInt32 = 0x7fff_0000  // SCMP_ACT_ALLOW

    /// libseccomp's default while it builds: trap, which no policy uses, and every `ret` of it
    /// is rewritten to allow afterwards. (With allow itself as the default, libseccomp would
    /// refuse the explicit allow rules that `personality` and `sendmsg` need beside their
    /// deny rules: it rejects a rule whose action equals the default.)
    static let standInDefault: UInt32 = 0x0003_0000  // SCMP_ACT_TRAP

    /// The action `clone3` gets when the policy denies creating namespaces: its flags sit
    /// behind a pointer the filter cannot read, so it answers as a kernel without `clone3`
    /// would, and libc and the Swift runtime fall back to `clone`, whose flags it can read.
    /// A logged `unshare` logs `clone3` too.
    static func clone3Action(forUnshare action: SyscallAction) -> SyscallAction {
        action == .log ? .log : .errno(ENOSYS)
    }

    private static func build(rules: [SeccompRule], canonical: String, hostNetwork: Bool) throws -> SeccompProgram {
        guard let ctx = seccomp_init(standInDefault) else {
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
            throw SandboxError(
                "compile seccomp filter", errno: .notSupported,
                message: "the notify action needs libseccomp API level 5 (kernel 5.0+)")
        }
        var notifyErrnos: [Int32: Int32] = [:]

        func add(_ name: String, _ nr: Int32, _ action: UInt32, _ conditions: [scmp_arg_cmp] = []) throws {
            let rc = conditions.withUnsafeBufferPointer {
                seccomp_rule_add_array(ctx, action, nr, UInt32($0.count), $0.isEmpty ? nil : $0.baseAddress)
            }
            if rc < 0 {
                throw SandboxError("add seccomp rule", errno: Errno(rawValue: -rc), message: "\(name) action \(String(action, radix: 16))")
            }
        }
        func deny(_ name: String, _ nr: Int32, _ action: SyscallAction, _ conditions: [scmp_arg_cmp] = []) throws {
            try add(name, nr, actionValue(action), conditions)
            if case .notify(let e) = action, nr >= 0 { notifyErrnos[nr] = e }
        }
        func arg0(_ op: scmp_compare, _ a: UInt64, _ b: UInt64 = 0) -> scmp_arg_cmp {
            scmp_arg_cmp(arg: 0, op: op, datum_a: a, datum_b: b)
        }

        /// `action` for every first argument but `allowed`.
        func denyExcept(_ name: String, _ nr: Int32, _ allowed: [UInt64], _ action: SyscallAction) throws {
            for value in allowed {
                try add(name, nr, allowAction, [arg0(SCMP_CMP_EQ, value)])
            }
            // Every other value; libseccomp tests the equalities above first.
            try deny(name, nr, action, [arg0(SCMP_CMP_GE, 0)])
        }

        var byName: [String: SyscallAction] = [:]
        for rule in rules {
            guard let nr = SyscallNames.number(rule.syscall) else {
                throw SandboxError(
                    "compile seccomp filter", errno: .invalidArgument,
                    message: "unknown syscall \"\(rule.syscall)\"")
            }
            if launcherNeeds.contains(rule.syscall), rule.action != .log {
                throw SandboxError(
                    "compile seccomp filter", errno: .invalidArgument,
                    message: "\(rule.syscall) cannot be denied: the launcher calls it after loading the filter")
            }
            byName[rule.syscall] = rule.action
            switch rule.syscall {
            case "sendmsg" where usesNotify:
                // The child hands the listener over with sendmsg on this fd after loading the filter.
                let fd = UInt64(APPEX_NOTIFY_SOCK_FD)
                try add("sendmsg", nr, allowAction, [arg0(SCMP_CMP_EQ, fd)])
                try deny("sendmsg", nr, rule.action, [arg0(SCMP_CMP_NE, fd)])
            case "personality":
                try denyExcept("personality", nr, SeccompArgumentRules.harmlessPersonalities, rule.action)
            default:
                try deny(rule.syscall, nr, rule.action)
            }
        }

        // clone with a CLONE_NEW* flag is unshare by another name: it gets unshare's action,
        // unless the policy names clone (or clone3) itself.
        if let unshare = byName["unshare"] {
            if byName["clone"] == nil, let nr = SyscallNames.number("clone"), nr >= 0 {
                let mask = SeccompArgumentRules.cloneNamespaceMask
                let arg = SeccompArgumentRules.cloneFlagsArgument
                for flag in SeccompArgumentRules.cloneNamespaceFlags {
                    try deny("clone", nr, unshare, [scmp_arg_cmp(arg: arg, op: SCMP_CMP_MASKED_EQ, datum_a: flag, datum_b: flag)])
                }
                try add("clone", nr, allowAction, [scmp_arg_cmp(arg: arg, op: SCMP_CMP_MASKED_EQ, datum_a: mask, datum_b: 0)])
            }
            if byName["clone3"] == nil, let nr = SyscallNames.number("clone3"), nr >= 0 {
                try deny("clone3", nr, clone3Action(forUnshare: unshare))
            }
        }

        // Only the address families the network needs, unless the policy names the call itself.
        let families = [
            ("socket", SeccompArgumentRules.socketFamilies(hostNetwork: hostNetwork)),
            ("socketpair", SeccompArgumentRules.socketpairFamilies),
        ]
        for (name, allowed) in families where byName[name] == nil {
            guard let nr = SyscallNames.number(name), nr >= 0 else { continue }
            try denyExcept(name, nr, allowed, SeccompArgumentRules.unsupportedFamilyAction)
        }

        let fd = appex_memfd("appex-seccomp")
        if fd < 0 { throw Sys.fail("memfd_create") }
        defer { Sys.close(fd) }
        let rc = seccomp_export_bpf(ctx, fd)
        if rc < 0 { throw SandboxError("seccomp_export_bpf", errno: Errno(rawValue: -rc)) }
        if lseek(fd, 0, SEEK_SET) < 0 { throw Sys.fail("lseek") }
        var body = try Sys.readAll(fd: fd)
        guard !body.isEmpty, body.count % 8 == 0 else {
            throw SandboxError("seccomp_export_bpf", errno: .invalidArgument, message: "unexpected program size \(body.count) bytes")
        }
        // The stand-in default becomes allow: only `ret` instructions carry an action.
        for i in stride(from: 0, to: body.count, by: 8) where body[i] == 0x06 && body[i + 1] == 0 {
            let k = UInt32(body[i + 4]) | UInt32(body[i + 5]) << 8 | UInt32(body[i + 6]) << 16 | UInt32(body[i + 7]) << 24
            if k == standInDefault { withUnsafeBytes(of: allowAction.littleEndian) { body.replaceSubrange(i + 4..<i + 8, with: $0) } }
        }
        #if arch(x86_64)
        let x32 = true
        #else
        let x32 = false
        #endif
        guard
            let prelude = SeccompPrelude.bytes(
                known: SyscallNames.knownNumbers, nativeArch: seccomp_arch_native(),
                x32: x32, unknownAction: actionValue(unknownSyscallAction))
        else {
            throw SandboxError("compile seccomp filter", errno: .invalidArgument, message: "the known syscall numbers do not fit a prelude")
        }
        let bytes = prelude + body
        guard bytes.count / 8 <= maxInstructions else {
            throw SandboxError(
                "seccomp_export_bpf", errno: .invalidArgument,
                message: "unexpected program size \(bytes.count) bytes (at most \(maxInstructions) instructions)")
        }
        return SeccompProgram(
            bytes: bytes, usesNotify: usesNotify, notifyErrnos: notifyErrnos,
            canonicalRules: canonical, digest: FNV1a.of(canonical.utf8))
    }
}
