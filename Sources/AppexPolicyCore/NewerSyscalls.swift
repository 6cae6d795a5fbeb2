/// System calls newer than the libseccomp on the build machine (2.5.4 knows x86_64 up to
/// `futex_requeue`, 456), by their native number, so policies can name them and the filter
/// compiler can resolve them.
///
/// Since Linux 5.1 every new call gets the same number on all architectures (424 onwards,
/// `scripts/syscall.tbl`, `include/uapi/asm-generic/unistd.h`); the x86_64-only uprobe calls
/// sit in x86_64's old range. A newer libseccomp that knows a name wins: it is asked first.
/// Checked against Linux 6.18 (`__x64_sys_*` in /proc/kallsyms): nothing above 469.
enum NewerSyscalls {
    /// Calls every 64-bit architecture shares, numbered from `scripts/syscall.tbl`.
    static let common: [(name: String, number: Int32)] = [
        ("statmount", 457), ("listmount", 458),
        ("lsm_get_self_attr", 459), ("lsm_set_self_attr", 460), ("lsm_list_modules", 461),
        ("mseal", 462),
        ("setxattrat", 463), ("getxattrat", 464), ("listxattrat", 465), ("removexattrat", 466),
        ("open_tree_attr", 467),
        ("file_getattr", 468), ("file_setattr", 469),
    ]

    /// This machine's architecture: the only one the filter admits (others are killed).
    static var native: [(name: String, number: Int32)] {
        #if arch(x86_64)
        // Only the kernel's own uprobe trampolines call these, and the kernel checks the
        // caller; denying them would break a process someone attached probes to.
        return common + [("uretprobe", 335), ("uprobe", 336)]
        #elseif arch(arm64)
        return common
        #else
        return []
        #endif
    }
}
