import AppexPolicy
import Testing

@testable import AppexBinaryLint
@testable import AppexELF

/// The symbol → system call table, and that it agrees with the shipped policy.
@Suite struct SyscallWrappersTests {
    @Test(arguments: [
        ("mount", ["mount"]), ("umount", ["umount2"]), ("umount2", ["umount2"]), ("__clone", ["clone"]),
        ("klogctl", ["syslog"]), ("daemon", ["setsid"]), ("io_uring_queue_init", ["io_uring_setup"]),
        ("io_uring_register_buffers", ["io_uring_register"]), ("keyctl_join_session_keyring", ["keyctl"]),
        ("bpf_prog_load", ["bpf"]), ("mount@GLIBC_2.2.5", ["mount"]), ("syslog", []),
    ])
    func symbolsMapToTheirCalls(symbol: String, calls: [String]) {
        #expect(SyscallWrappers.meaning(of: symbol) == .syscalls(calls))
    }

    @Test func rawSyscallIsItsOwnKind() {
        #expect(SyscallWrappers.meaning(of: "syscall") == .rawSyscall)
    }

    /// Every call the tables name is a real system call (a typo would silently check nothing).
    @Test func everyMappedCallIsASystemCall() {
        let calls = SyscallWrappers.renamed.values.flatMap { $0 } + SyscallWrappers.prefixes.map(\.syscall)
        for call in Set(calls) { #expect(SyscallNames.isKnown(call), "\(call)") }
    }

    /// The calls the brief names are denied by the shipped defaults, each by its group.
    @Test(arguments: [
        ("mount", "mounting"), ("ptrace", "process-tracing"), ("reboot", "reboot"), ("unshare", "namespaces"),
        ("setns", "namespaces"), ("init_module", "kernel-modules"), ("bpf", "bpf"), ("perf_event_open", "performance-monitoring"),
        ("keyctl", "keyrings"), ("add_key", "keyrings"), ("swapon", "swap"), ("clock_settime", "clock-setting"),
        ("iopl", "raw-io"), ("io_uring_setup", "io-uring"), ("personality", "personality"), ("listen", "app-extension-unavailable"),
        ("accept", "app-extension-unavailable"), ("setsid", "app-extension-unavailable"), ("open_by_handle_at", "file-handles"),
        ("umount", "mounting"), ("io_uring_queue_init", "io-uring"), ("daemon", "app-extension-unavailable"),
    ])
    func theDefaultsDenyTheUnavailableCalls(symbol: String, group: String) throws {
        let policy = BinaryLintPolicy(EffectivePolicy(extensionPoint: "", in: try PolicyLocator.load()), extensionPoint: nil)
        let findings = BinaryLinter.findings([ELFImport(nameBytes: Array(symbol.utf8), isWeak: false)], in: "probe", policy: policy)
        #expect(findings.count == 1)
        #expect(findings.first?.group == group)
        #expect(findings.first?.code == .unavailableAPI)
    }

    @Test func harmlessImportsGiveNothing() throws {
        let policy = BinaryLintPolicy(EffectivePolicy(extensionPoint: "", in: try PolicyLocator.load()), extensionPoint: nil)
        let imports = ["puts", "malloc", "syslog", "clone", "socket", "connect", "read", "write"].map {
            ELFImport(nameBytes: Array($0.utf8), isWeak: false)
        }
        #expect(BinaryLinter.findings(imports, in: "probe", policy: policy).isEmpty)
    }
}
