import BenchSupport

/// How busy the whole machine was between two readings of /proc/stat (all CPUs): the share of
/// CPU time not idle, other users' builds included. The benchmark shares its VM; this says how
/// much of what it measured was the machine's.
struct MachineLoad {
    private let start = machineCPUTimes()

    /// Busy share since `init`, 0…1.
    var busy: Double {
        let end = machineCPUTimes()
        let total = Double(end.total &- start.total), idle = Double(end.idle &- start.idle)
        return total > 0 ? (total - idle) / total : 0
    }
}
