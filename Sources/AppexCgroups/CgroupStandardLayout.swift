import CAppexLinux

#if canImport(Glibc)
import Glibc
#endif

extension CgroupManager {
    /// The v1 memory and pids hierarchies where systemd and the distributions mount them
    /// (`/sys/fs/cgroup/memory`, `/sys/fs/cgroup/pids`), recognized by `statfs` and a control
    /// file of each controller, as systemd recognizes its cgroup layout; nil when either is
    /// not there, and `detect` then reads `/proc/self/mountinfo` (`probe`).
    ///
    /// A v1 pids root has no `pids.*` files, so the pids hierarchy is recognized by the
    /// `pids.max` of Appex's parent cgroup in it: after the first run, when it exists. The
    /// answer is the one `probe` gives: a controller is bound to one hierarchy at a time, so
    /// with memory on a v1 hierarchy no cgroup2 mount can offer it, and v1 is what `detect`
    /// picks. `detect` runs on every `appex run`, and mountinfo is dear (the kernel formats
    /// every mount, then the parse); these are four system calls.
    static func standardV1Roots(parentName: String, base: String = "/sys/fs/cgroup") -> CgroupRoots? {
        let memory = base + "/memory", pids = base + "/pids"
        guard isV1Hierarchy(memory, offering: "memory.limit_in_bytes"),
            isV1Hierarchy(pids, offering: parentName + "/pids.max")
        else { return nil }
        return .v1(memory: memory, pids: pids)
    }

    /// `CGROUP_SUPER_MAGIC` (linux/magic.h): a v1 cgroup hierarchy.
    static let v1SuperMagic = 0x27e0eb

    /// Whether `path` is a v1 hierarchy whose controller owns `file` (a path beneath it).
    private static func isV1Hierarchy(_ path: String, offering file: String) -> Bool {
        var type = 0
        guard appex_filesystem_type(path, &type) == 0, type == v1SuperMagic else { return false }
        return access(path + "/" + file, F_OK) == 0
    }
}
