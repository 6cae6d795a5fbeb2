import AppexCgroups

/// What a scrape needs from the loop: the installed extensions and every live instance with
/// its band and cgroup. Taken on the loop in O(instances) with no system call; the cgroup
/// files are read afterwards, off the loop, by whoever asked (AppexMetrics).
public struct MetricsSnapshot: Sendable {
    public struct Extension: Sendable {
        public var bundleIdentifier: String
        public var extensionPoint: String
        public var enabled: Bool
        /// The policy's active hard footprint limit.
        public var memoryLimitBytes: Int64
        /// The largest high-water mark seen for an instance that has answered or ended.
        public var peakBytes: Int64?
    }

    public struct Instance: Sendable {
        public var bundleIdentifier: String
        /// The band it is in now: the active one while launching or serving, the idle one
        /// while idle.
        public var band: String
        public var cgroup: ExtensionCgroup?
    }

    public var extensions: [Extension]
    public var instances: [Instance]
}

extension Supervisor {
    /// Loop only (`await supervisor.onLoop { $0.metricsSnapshot() }`).
    public func metricsSnapshot() -> MetricsSnapshot {
        metrics.forgetPeaks(keeping: Set(catalog.keys))
        let extensions = catalog.values.map { entry in
            MetricsSnapshot.Extension(bundleIdentifier: entry.identifier, extensionPoint: entry.installed.extensionPoint,
                                      enabled: entry.installed.isEnabled,
                                      memoryLimitBytes: entry.lifecycle.memory.activeHardLimit.bytes,
                                      peakBytes: metrics.peaks[entry.identifier])
        }
        var instances: [MetricsSnapshot.Instance] = []
        for slot in slots.values {
            let lifecycle = catalog[slot.identifier]?.lifecycle
            for instance in slot.instances where instance.isLive {
                let band = instance.state == .idle ? lifecycle?.idleBand : lifecycle?.jetsamBand
                instances.append(.init(bundleIdentifier: instance.identifier, band: band?.name ?? "unknown",
                                       cgroup: instance.run?.run.cgroup))
            }
        }
        return MetricsSnapshot(extensions: extensions, instances: instances)
    }
}
