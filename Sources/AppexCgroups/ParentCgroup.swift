#if canImport(Glibc)
import Glibc
#endif

// The parent cgroup as one whole: all extensions together. The memory budget is its limit,
// its hierarchical statistics give their total footprint, and its usage thresholds and
// vmpressure events wake the memory governor (Docs/jetsam.md).

extension CgroupManager {
    /// A handle on the parent cgroup (memory hierarchy on v1), for reading and watching the
    /// total. Not for removal: `removeParent` does that.
    public func parentCgroup() -> ExtensionCgroup {
        handle(
            relativePath: parentName, name: parentName, limits: CgroupLimits(swapOff: false),
            removeDirectory: { _ in false })
    }

    /// Sets the kernel's limits on all extensions together (nil: unlimited). Creates the parent
    /// first when it is missing. `hard`: the charge at which the kernel reclaims, then
    /// OOM-kills (v1 `memory.limit_in_bytes`, v2 `memory.max`). `high`: v2 `memory.high`, where
    /// the kernel throttles the extensions' allocations; v1 has no such limit (its soft limit
    /// acts only when the host is short), so it is ignored there.
    public func setBudgetLimits(hard: Int64?, high: Int64?) throws {
        try prepare()
        let parent = parentCgroup()
        switch version {
        case .v1:
            try Sys.writeFile(parent.file("memory.limit_in_bytes"), hard.map(String.init) ?? "-1")
        case .v2:
            // The throttle first, in place before the hard line moves.
            try Sys.writeFile(parent.file("memory.high"), high.map(String.init) ?? "max")
            try Sys.writeFile(parent.file("memory.max"), hard.map(String.init) ?? "max")
        }
    }
}

extension ExtensionCgroup {
    /// The footprint of this cgroup and everything below it. v1 keeps its own and its
    /// descendants' pages apart (`rss` vs `total_rss`); v2's memory.stat is hierarchical.
    public func hierarchicalFootprint() throws -> Footprint {
        let stat = try memoryStat()
        guard version == .v1 else { return Footprint(stat: stat, version: .v2) }
        var totals: [String: Int64] = [:]
        for (key, value) in stat where key.hasPrefix("total_") { totals[String(key.dropFirst(6))] = value }
        return Footprint(stat: totals, version: .v1)
    }

    /// v1 vmpressure: fires when reclaim in this cgroup (`local`: started by this cgroup's own
    /// limit, not passed up from a child at its limit) reaches `level` (low, medium, critical).
    /// Kernels without the mode suffix get the plain level.
    public func makeVMPressureWatcher(level: String) throws -> CgroupEvent {
        guard version == .v1 else {
            throw CgroupError(
                "watch vmpressure of", path: memoryDir, errno: .notSupported,
                message: "memory.pressure_level is cgroup v1; on v2 use PSI (memory.pressure)")
        }
        let source: EventSource
        do {
            source = try EventSource.v1Event(dir: memoryDir, control: "memory.pressure_level", argument: level + ",local")
        } catch {
            source = try EventSource.v1Event(dir: memoryDir, control: "memory.pressure_level", argument: level)
        }
        return CgroupEvent(source: source)
    }
}

/// `/proc/meminfo`'s MemAvailable and MemTotal, in bytes.
public enum SystemMemory {
    public static func read(path: String = "/proc/meminfo") throws -> (available: Int64, total: Int64) {
        var available: Int64?, total: Int64?
        for line in try Sys.readFile(path).split(separator: "\n") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 2, let kib = Int64(parts[1]) else { continue }
            if parts[0] == "MemAvailable:" { available = kib * 1024 }
            if parts[0] == "MemTotal:" { total = kib * 1024 }
        }
        guard let available, let total else {
            throw CgroupError("read MemAvailable from", path: path, message: "no MemAvailable/MemTotal line")
        }
        return (available, total)
    }
}

/// A kernel notification for a caller that polls `fd` itself (the supervisor's event loop).
public final class CgroupEvent: Sendable {
    let source: EventSource
    init(source: EventSource) { self.source = source }
    /// Pollable descriptor (POLLIN). Owned by this object.
    public var fd: Int32 { source.fd }
    /// Consumes pending notifications.
    public func acknowledge() { Sys.drain(source.fd) }
}
