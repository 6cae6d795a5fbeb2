/// Which cgroup hierarchy layout a manager drives.
public enum CgroupVersion: String, Sendable, CaseIterable {
    /// Legacy: one hierarchy per controller (`/sys/fs/cgroup/memory`, `/sys/fs/cgroup/pids`).
    case v1
    /// Unified hierarchy (`/sys/fs/cgroup` on cgroup2, or a delegated subtree of it).
    case v2
}

/// The limits an extension's cgroup is created with. `nil` means "no limit".
public struct CgroupLimits: Sendable, Equatable, CustomStringConvertible {
    /// Hard limit in bytes: the kernel reclaims, then OOM-kills above it.
    /// v2 `memory.max`, v1 `memory.limit_in_bytes` (and `memory.memsw.limit_in_bytes` when swap is off).
    public var memoryMax: Int64?
    /// Soft limit in bytes. v2 `memory.high` (throttles and reclaims above it);
    /// v1 `memory.soft_limit_in_bytes`, which only acts under global memory pressure:
    /// use `ExtensionCgroup.makeThresholdWatcher(bytes:)` for the warning on v1.
    public var memoryHigh: Int64?
    /// Maximum number of tasks (processes and threads). `pids.max`.
    public var pidsMax: Int?
    /// Keep the extension out of swap. v2 `memory.swap.max = 0`; v1 `memory.swappiness = 0`
    /// plus `memory.memsw.limit_in_bytes = memoryMax` where swap accounting exists.
    public var swapOff: Bool

    public init(memoryMax: Int64? = nil, memoryHigh: Int64? = nil, pidsMax: Int? = nil, swapOff: Bool = true) {
        self.memoryMax = memoryMax
        self.memoryHigh = memoryHigh
        self.pidsMax = pidsMax
        self.swapOff = swapOff
    }

    public var description: String {
        func b(_ v: Int64?) -> String { v.map(String.init) ?? "max" }
        return "memoryMax=\(b(memoryMax)) memoryHigh=\(b(memoryHigh)) pidsMax=\(pidsMax.map(String.init) ?? "max") swapOff=\(swapOff)"
    }
}

/// How a child joins its cgroup before `execve`.
///
/// - `procsFiles`: v1. The child writes `"0"` into each file: each hierarchy's `tasks`, which
///   moves the (single-threaded) child without the kernel-wide write lock `cgroup.procs`
///   takes. It must not open them itself (it may already be in its new mount namespace): the
///   parent passes descriptors from `ExtensionCgroup.openJoinFDs()`, opened
///   `O_WRONLY|O_CLOEXEC`.
/// - `directory`: v2. A cgroup directory whose `O_PATH` descriptor goes to
///   `clone3(CLONE_INTO_CGROUP)`: the child is born in it, nothing is moved.
public enum CgroupJoin: Sendable, Equatable {
    case procsFiles([String])
    case directory(String)
}

/// Where the hierarchies live. v1 uses `memory` (required) and `pids` (optional);
/// v2 uses `unified`: the directory under which Appex's parent cgroup is made
/// (the cgroup2 mount, or a delegated subtree of it).
public struct CgroupRoots: Sendable, Equatable, CustomStringConvertible {
    public var unified: String?
    public var memory: String?
    public var pids: String?

    public init(unified: String? = nil, memory: String? = nil, pids: String? = nil) {
        self.unified = unified
        self.memory = memory
        self.pids = pids
    }

    public static func v2(_ unified: String) -> CgroupRoots { CgroupRoots(unified: unified) }
    public static func v1(memory: String, pids: String?) -> CgroupRoots { CgroupRoots(memory: memory, pids: pids) }

    /// The hierarchies of this machine's default mount points.
    public static let systemV1 = CgroupRoots(memory: "/sys/fs/cgroup/memory", pids: "/sys/fs/cgroup/pids")
    public static let systemV2 = CgroupRoots(unified: "/sys/fs/cgroup")

    public var description: String {
        [unified.map { "unified=\($0)" }, memory.map { "memory=\($0)" }, pids.map { "pids=\($0)" }]
            .compactMap { $0 }.joined(separator: " ")
    }
}
