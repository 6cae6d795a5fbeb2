import AppexPolicy
import AppexTestSupport
import Foundation
import Testing

@testable import AppexSandbox

#if canImport(Glibc)
import Glibc
#endif

/// The probe's forbidden calls (issue 12, item 2) against the real kernel, each three ways:
/// as root with no sandbox at all (what a failed sandbox would let happen: the kernel must
/// reject the probe's arguments), in the sandbox with no rules (the kernel's answer to the
/// extension's uid), and under the shipped rules. The shipped errno is EPERM, which the kernel
/// also answers an unprivileged caller of some calls (pivot_root, fsopen, ...), so the rules
/// are also run with their errno swapped for one no such call returns: that answer can only
/// come from the filter.
@Suite(.serialized, .requiresRoot("the sandbox needs root"))
struct ProbeCallTests {
    /// What the shipped rules do with a call.
    enum Shipped: Sendable, CustomStringConvertible {
        case errno(String)
        case killed
        var description: String {
            switch self {
            case .errno(let e): "errno=\(e)"
            case .killed: "killed"
            }
        }
    }

    struct Call: Sendable, CustomTestStringConvertible {
        let args: [String]
        let shipped: Shipped
        /// The kernel's answers in the sandbox with no rules (the extension's uid, no
        /// capabilities) and as root without a sandbox. A set where the kernel's build
        /// decides (ENOSYS without the feature).
        let unprivileged: Set<String>
        let root: Set<String>
        var testDescription: String { args.joined(separator: " ") }

        init(_ args: [String], _ shipped: Shipped, unprivileged: Set<String>, root: Set<String>? = nil) {
            self.args = args
            self.shipped = shipped
            self.unprivileged = unprivileged
            self.root = root ?? unprivileged
        }
    }

    /// An errno none of these calls returns by itself (memory page hardware error).
    static let distinctive = EHWPOISON

    static let calls: [Call] = {
        var list: [Call] = [
            Call(["ptrace"], .errno("EPERM"), unprivileged: ["errno=ESRCH"]),
            Call(["process_vm_readv"], .errno("EPERM"), unprivileged: ["errno=ESRCH"]),
            Call(["mount"], .errno("EPERM"), unprivileged: ["errno=ENOENT"]),
            Call(["umount2"], .errno("EPERM"), unprivileged: ["errno=ENOENT"]),
            // Both check the capability before anything else.
            Call(["pivot_root"], .errno("EPERM"), unprivileged: ["errno=EPERM"], root: ["errno=ENOENT"]),
            Call(["fsopen"], .errno("EPERM"), unprivileged: ["errno=EPERM"], root: ["errno=EINVAL"]),
            Call(["open_tree"], .errno("EPERM"), unprivileged: ["errno=EINVAL"]),
            Call(["move_mount"], .errno("EPERM"), unprivileged: ["errno=EPERM"], root: ["errno=EINVAL"]),
            Call(["unshare"], .errno("EPERM"), unprivileged: ["ok"]),
            Call(["setns"], .errno("EPERM"), unprivileged: ["errno=EBADF"]),
            // clone3's flags are behind a pointer: the filter answers it as a kernel without it.
            Call(["clone3"], .errno("ENOSYS"), unprivileged: ["ok"]),
            Call(["clone"], .errno("EPERM"), unprivileged: ["ok"]),
            Call(["bpf"], .errno("EPERM"), unprivileged: ["errno=E2BIG"]),
            Call(["perf_event_open"], .errno("EPERM"), unprivileged: ["errno=EINVAL"]),
            Call(["keyctl"], .errno("EPERM"), unprivileged: ["errno=ENOKEY"]),
            Call(["add_key"], .errno("EPERM"), unprivileged: ["errno=ENOKEY"]),
            Call(["clock_settime"], .errno("EPERM"), unprivileged: ["errno=EINVAL"]),
            Call(["userfaultfd"], .errno("EPERM"), unprivileged: ["errno=EINVAL"]),
            Call(["io_uring_setup"], .errno("EPERM"), unprivileged: ["errno=EFAULT", "errno=EPERM"], root: ["errno=EFAULT"]),
            Call(["personality"], .errno("EPERM"), unprivileged: ["ok"]),
            Call(["reboot"], .killed, unprivileged: ["errno=EPERM"], root: ["errno=EINVAL"]),
            Call(["kexec_load"], .killed, unprivileged: ["errno=EPERM", "errno=ENOSYS"], root: ["errno=EINVAL", "errno=ENOSYS"]),
            Call(["init_module"], .killed, unprivileged: ["errno=EPERM", "errno=ENOSYS"], root: ["errno=ENOEXEC", "errno=ENOSYS"]),
            Call(["swapon"], .killed, unprivileged: ["errno=EINVAL"]),
        ]
        #if arch(x86_64)
        list.append(Call(["iopl"], .killed, unprivileged: ["errno=EINVAL", "errno=ENOSYS"]))
        #endif
        return list
    }()

    /// The rules with every errno answer swapped for the distinctive one.
    static func distinctiveRules(_ rules: [SeccompRule]) -> [SeccompRule] {
        rules.map { r in
            if case .errno = r.action { return SeccompRule(r.syscall, .errno(distinctive)) }
            return r
        }
    }

    /// The probe run directly, as root, outside any sandbox: its one output line.
    static func unsandboxed(_ args: [String]) throws -> String {
        let p = Process()
        let out = Pipe()
        p.executableURL = URL(fileURLWithPath: Fixture.probe)
        p.arguments = args
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return text.split(separator: "\n").last.map(String.init) ?? ""
    }

    /// A bundle identifier part: letters, digits and '-'.
    static func tag(_ args: [String]) -> String {
        String(args[0].map { $0 == "_" ? "-" : $0 })
    }

    static func killedBySeccomp(_ report: RunReport) -> Bool {
        report.signal == SIGSYS && report.killReason == "seccomp-violation"
    }

    @Test(arguments: calls)
    func harmlessWhenNothingStopsIt(_ call: Call) throws {
        // As root without a sandbox the kernel reads the arguments, and rejects them.
        let asRoot = try Self.unsandboxed(call.args)
        #expect(call.root.contains(asRoot), "as root: \(asRoot)")

        let r = try ProbeRun("call-\(Self.tag(call.args))")
        let (control, open) = try r.run(call.args)
        #expect(control.exitStatus == 0)
        #expect(call.unprivileged.contains(open), "with no rules: \(open)")
    }

    @Test(arguments: calls)
    func theShippedRulesStopIt(_ call: Call) throws {
        let rules = try ShippedRules.rules()
        let r = try ProbeRun("shipped-\(Self.tag(call.args))")
        let (report, out) = try r.run(call.args, rules: rules)
        switch call.shipped {
        case .errno(let name):
            #expect(out == "errno=\(name)")
            #expect(report.exitStatus == 0)
            // The same rules with another errno: the answer is the filter's, not the kernel's.
            let expected = name == "ENOSYS" ? "errno=ENOSYS" : "errno=EHWPOISON"
            #expect(try r.run(call.args, rules: Self.distinctiveRules(rules)).1 == expected)
        case .killed:
            #expect(Self.killedBySeccomp(report), "\(report)")
        }
    }

    /// The calls a 64-bit process can also make through the i386 (`int 0x80`) and x32 tables,
    /// where a filter that checked only x86_64 numbers would not see them. Outside a sandbox
    /// they reach the kernel (x32 answers ENOSYS on kernels built without it); every filter
    /// Appex compiles, even one with no rules, kills a process that uses another ABI at all,
    /// allowed calls included.
    static let abiCalls: [(abi: String, args: [String], asRoot: Set<String>)] = {
        #if arch(x86_64)
        let calls: [([String], Set<String>)] = [
            (["getpid"], ["ok"]), (["ptrace"], ["errno=ESRCH"]), (["mount"], ["errno=ENOENT"]),
            (["unshare"], ["ok"]), (["setns"], ["errno=EBADF"]), (["clone3"], ["ok"]),
            (["bpf"], ["errno=E2BIG"]), (["keyctl"], ["errno=ENOKEY"]), (["reboot"], ["errno=EINVAL"]),
            (["personality"], ["ok"]), (["kill"], ["errno=ESRCH"]),
        ]
        return calls.flatMap { args, asRoot in
            [("i386", args, asRoot), ("x32", args, asRoot.union(["errno=ENOSYS"]))]
        }
        #else
        return []
        #endif
    }()

    @Test(.enabled(if: isX86_64, "the i386 and x32 ABIs exist on x86_64 only"), arguments: abiCalls)
    func otherABIsAreKilled(abi: String, args: [String], asRoot: Set<String>) throws {
        let open = try Self.unsandboxed([abi] + args)
        // A kernel without IA32 emulation refuses int 0x80 itself: nothing to contain then.
        let absent = open.hasPrefix("unsupported \(abi) ABI")
        #expect(absent || asRoot.contains(open), "\(abi) \(args[0]) as root: \(open)")
        let r = try ProbeRun("abi-\(abi)-\(Self.tag(args))")
        for rules in [[], try ShippedRules.rules()] {
            let (report, out) = try r.run([abi] + args, rules: rules)
            #expect(
                Self.killedBySeccomp(report) || (absent && out.hasPrefix("unsupported")),
                "\(rules.count) rules: \(report) \(out)")
        }
    }

    @Test func callsTheShippedRulesAllowStillWork() throws {
        let r = try ProbeRun("allowed-calls")
        let rules = try ShippedRules.rules()
        for (args, expected) in [(["getpid"], "ok"), (["socket-unix"], "ok"), (["kill"], "errno=ESRCH"), (["syscall", "getpid"], "ok")] {
            #expect(try r.run(args, rules: rules).1 == expected, "\(args)")
        }
        // Without the host network only AF_UNIX sockets are made (issue 30, #9); the filter
        // answers, before the kernel's own checks (a packet socket's CAP_NET_RAW).
        for family in ["socket-inet", "socket-inet6", "socket-netlink", "socket-packet", "socket-vsock"] {
            #expect(try r.run([family], rules: rules).1 == "errno=EAFNOSUPPORT", "\(family)")
        }
    }

    /// open_by_handle_at names a file past the sandbox's view: the file-handles group denies
    /// it (before that group, only the missing CAP_DAC_READ_SEARCH stopped it).
    @Test func openByHandleAtIsDenied() throws {
        let r = try ProbeRun("open-by-handle")
        let out = try r.run(["open_by_handle_at"], rules: try ShippedRules.rules()).1
        #expect(out == "errno=EPERM")
    }
}
