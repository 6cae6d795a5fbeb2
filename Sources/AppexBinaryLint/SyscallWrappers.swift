/// Which system calls an imported function makes.
///
/// Most C library wrappers carry the system call's name (`mount`, `ptrace`, `reboot`), so a
/// name the policy denies is a finding as it stands. This table holds the exceptions: glibc
/// functions whose system call has another name, library entry points (liburing, libbpf,
/// libkeyutils) that make a denied call, and libc functions named like a system call that do
/// not make it. `syscall` itself can make any call: what it makes cannot be read statically.
public enum SyscallWrappers {
    public enum Meaning: Sendable, Equatable {
        /// Importing the symbol means these system calls can be made.
        case syscalls([String])
        /// `syscall(2)`: any call, chosen at run time.
        case rawSyscall
    }

    /// Symbol → the system calls it makes, where they differ from its name.
    static let renamed: [String: [String]] = [
        // glibc names that differ from the call they make.
        "umount": ["umount2"],
        "__clone": ["clone"], "__clone3": ["clone3"],
        "klogctl": ["syslog"],
        "ntp_adjtime": ["adjtimex"], "__adjtimex": ["adjtimex"], "adjtime": ["adjtimex"],
        "stime": ["settimeofday"],
        // Functions that make a denied call on the way.
        "daemon": ["setsid"],  // detaches: fork, then setsid
        "login_tty": ["setsid"], "forkpty": ["setsid"],
        // liburing: the ring is set up, entered and registered through these.
        "io_uring_queue_init": ["io_uring_setup"], "io_uring_queue_init_params": ["io_uring_setup"],
        "io_uring_queue_init_mem": ["io_uring_setup"],
        "io_uring_get_probe": ["io_uring_setup", "io_uring_register"],
        "io_uring_get_probe_ring": ["io_uring_register"],
        "io_uring_submit": ["io_uring_enter"], "io_uring_submit_and_wait": ["io_uring_enter"],
        "io_uring_submit_and_wait_timeout": ["io_uring_enter"], "io_uring_submit_and_get_events": ["io_uring_enter"],
        "io_uring_get_events": ["io_uring_enter"], "io_uring_wait_cqes": ["io_uring_enter"],
        "io_uring_wait_cqe_timeout": ["io_uring_enter"], "io_uring_enter2": ["io_uring_enter"],
        // libbpf's low-level API, each one bpf(2) command.
        "bpf_object__load": ["bpf"], "bpf_btf_load": ["bpf"],
    ]

    /// Prefixes of library families whose every function makes one call.
    static let prefixes: [(prefix: String, syscall: String)] = [
        ("io_uring_register_", "io_uring_register"), ("io_uring_unregister_", "io_uring_register"),
        ("keyctl_", "keyctl"),  // libkeyutils
        ("bpf_prog_", "bpf"), ("bpf_map_", "bpf"), ("bpf_link_", "bpf"), ("bpf_obj_", "bpf"),
    ]

    /// libc functions that share a system call's name but do not make it: syslog(3) writes
    /// to /dev/log; the syslog system call (the kernel log) is klogctl.
    static let notWrappers: Set<String> = ["syslog"]

    /// What importing `symbol` means. A name not in the tables stands for the system call of
    /// the same name (whether that is a system call at all is for the policy's table to say).
    public static func meaning(of symbol: String) -> Meaning {
        let name = symbol.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? symbol
        if name == "syscall" { return .rawSyscall }
        if let calls = renamed[name] { return .syscalls(calls) }
        if notWrappers.contains(name) { return .syscalls([]) }
        for (prefix, call) in prefixes where name.hasPrefix(prefix) { return .syscalls([call]) }
        return .syscalls([name])
    }
}
