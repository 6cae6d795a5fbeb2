import AppexCgroups
import AppexPolicy

/// What a scrape needs from the loop: the installed extensions, every live instance with its
/// jetsam band and cgroup, and the pressure level. Taken on the loop in O(instances) with no
/// system call; the cgroup files are read afterwards, off the loop, by whoever asked
/// (AppexMetrics). (`jetsamReport()` has the same facts but reads every footprint on the
/// loop, ~30 µs an instance: 30 ms of a stalled loop per scrape with 1,000 instances.)
public struct MetricsSnapshot: Sendable {
    public struct Extension: Sendable {
        public var bundleIdentifier: String
        public var extensionPoint: String
        public var enabled: Bool
        /// The policy's hard footprint limits while serving and while idle.
        public var activeLimitBytes: Int64
        public var inactiveLimitBytes: Int64
        /// The largest high-water mark seen for an instance that has answered or ended.
        public var peakBytes: Int64?

        public init(bundleIdentifier: String, extensionPoint: String, enabled: Bool, activeLimitBytes: Int64,
                    inactiveLimitBytes: Int64, peakBytes: Int64? = nil) {
            self.bundleIdentifier = bundleIdentifier
            self.extensionPoint = extensionPoint
            self.enabled = enabled
            self.activeLimitBytes = activeLimitBytes
            self.inactiveLimitBytes = inactiveLimitBytes
            self.peakBytes = peakBytes
        }
    }

    public struct Instance: Sendable {
        public var bundleIdentifier: String
        /// The jetsam band it is in now (Memory/Supervisor+Bands.swift): its active band while
        /// launching or serving, `aging` and then its idle band while idle.
        public var band: String
        public var cgroup: ExtensionCgroup?

        public init(bundleIdentifier: String, band: String, cgroup: ExtensionCgroup?) {
            self.bundleIdentifier = bundleIdentifier
            self.band = band
            self.cgroup = cgroup
        }
    }

    public var extensions: [Extension]
    public var instances: [Instance]
    public var pressureLevel: PressureLevel
    /// Changes whenever the installed extensions (or their policies) do: equal numbers mean
    /// `extensions` holds the same extensions with the same limits (peaks aside).
    public var catalogGeneration: UInt64

    public init(extensions: [Extension], instances: [Instance], pressureLevel: PressureLevel, catalogGeneration: UInt64 = 0) {
        self.extensions = extensions
        self.instances = instances
        self.pressureLevel = pressureLevel
        self.catalogGeneration = catalogGeneration
    }
}

extension Supervisor {
    /// Loop only (`await supervisor.onLoop { $0.metricsSnapshot() }`).
    public func metricsSnapshot() -> MetricsSnapshot {
        // The per-extension part is made again only after the catalog changed: copying 1,000
        // catalog entries on every scrape was a third of the scrape, on the loop.
        var extensions: [MetricsSnapshot.Extension]
        if let cached = metricsExtensions {
            extensions = cached
        } else {
            metrics.forgetPeaks(keeping: Set(catalog.keys))
            extensions = catalog.values.map { entry in
                MetricsSnapshot.Extension(bundleIdentifier: entry.identifier, extensionPoint: entry.installed.extensionPoint,
                                          enabled: entry.installed.isEnabled,
                                          activeLimitBytes: entry.lifecycle.memory.activeHardLimit.bytes,
                                          inactiveLimitBytes: entry.lifecycle.memory.inactiveHardLimit.bytes)
            }
            metricsExtensions = extensions
        }
        let peaks = metrics.peaks
        if !peaks.isEmpty {
            for i in extensions.indices { extensions[i].peakBytes = peaks[extensions[i].bundleIdentifier] }
        }
        var instances: [MetricsSnapshot.Instance] = []
        instances.reserveCapacity(slots.count)
        for slot in slots.values {
            for instance in slot.instances where instance.isLive {
                instances.append(.init(bundleIdentifier: instance.identifier,
                                       band: JetsamBand(value: instance.band)?.name ?? String(instance.band),
                                       cgroup: instance.run?.run.cgroup))
            }
        }
        return MetricsSnapshot(extensions: extensions, instances: instances, pressureLevel: jetsam.level,
                               catalogGeneration: catalogGeneration)
    }
}
