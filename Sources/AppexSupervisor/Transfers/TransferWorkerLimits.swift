import AppexCgroups

/// Where a transfer worker runs: a cgroup of its own beneath appexd's parent, beside the
/// extensions', so its memory and tasks are bounded and counted in what all extensions use
/// together (the budget and the kernel's limit on the parent). An extension's own cgroup may be
/// gone long before its transfer ends, and the worker's costs are appexd's to bound, not the
/// extension's limit to spend.
enum TransferWorkerLimits {
    /// Enough for the worker's HTTP stack and the page cache of what it writes, which the
    /// kernel reclaims within the limit; past it the kernel kills the worker (`crashed`).
    static let memory: Int64 = 128 << 20
    /// Its event loop's threads and the runtime's; it never forks.
    static let tasks = 64
    static let cgroup = CgroupLimits(memoryMax: memory, pidsMax: tasks, swapOff: true)

    /// `transfer_<id>`: an underscore, which no bundle identifier holds, keeps it apart from
    /// extensions' cgroups (`<bundle>-<pid>-<n>`).
    static func cgroupName(_ id: Int64) -> String { "transfer_\(id)" }
}
