import AppexCgroups
import AppexPolicy

/// What a scrape needs from the loop: the installed extensions, every live instance with its
/// jetsam band and cgroup, and the pressure level. Taken on the loop in O(instances) with no
/// system call; the cgroup files are read afterwards, off the loop, by whoever asked
/// (AppexMetrics). (`jetsamReport()` has the same facts but reads every footprint on the
/// loop: with 1,000 instances, a stalled loop on every scrape.)
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

        public init(
            bundleIdentifier: String, extensionPoint: String, enabled: Bool, activeLimitBytes: Int64,
            inactiveLimitBytes: Int64, peakBytes: Int64? = nil
        ) {
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
    /// Equal keys mean equal snapshots, the pressure level aside: the same extensions, limits
    /// and peaks, the same live instances in the same bands. nil: unknown (always different).
    public var contentKey: ContentKey?

    public struct ContentKey: Hashable, Sendable {
        /// Changes whenever the installed extensions (or their policies) do: equal numbers
        /// mean the same extensions with the same limits (peaks aside).
        public var catalog: UInt64
        public var peaks: UInt64
        public var instances: Int
    }

    public init(extensions: [Extension], instances: [Instance], pressureLevel: PressureLevel, contentKey: ContentKey? = nil) {
        self.extensions = extensions
        self.instances = instances
        self.pressureLevel = pressureLevel
        self.contentKey = contentKey
    }
}

/// The arrays the last snapshot was made of, and what they were made from.
struct MetricsSnapshotCache {
    /// The catalog's part, made again after a catalog change.
    var extensions: [MetricsSnapshot.Extension]?
    /// With the peaks filled in, as of `peaksVersion` and `catalogGeneration`.
    var withPeaks: [MetricsSnapshot.Extension] = []
    var withPeaksKey: (catalog: UInt64, peaks: UInt64)?
    /// The live instances, and the fingerprint of who they are and which band each is in.
    var instances: [MetricsSnapshot.Instance] = []
    var instancesFingerprint: Int?
}

extension Supervisor {
    /// Loop only (`await supervisor.onLoop { $0.metricsSnapshot() }`).
    public func metricsSnapshot() -> MetricsSnapshot {
        loop.assertOnLoop()
        // Made again only from what changed: copying 1,000 catalog entries and building 1,000
        // instances on every scrape was a third of the scrape, on the loop. In the steady
        // state this is one pass over the instances, hashing who they are and their bands.
        if metricsCache.extensions == nil {
            metrics.forgetPeaks(keeping: Set(catalog.keys))
            primeMetrics()
            metricsCache.extensions = catalog.values.map { entry in
                MetricsSnapshot.Extension(
                    bundleIdentifier: entry.identifier, extensionPoint: entry.installed.extensionPoint,
                    enabled: entry.installed.isEnabled,
                    activeLimitBytes: entry.lifecycle.memory.activeHardLimit.bytes,
                    inactiveLimitBytes: entry.lifecycle.memory.inactiveHardLimit.bytes)
            }
        }
        if metricsCache.withPeaksKey.map({ $0 != (catalogGeneration, metrics.peaksVersion) }) ?? true {
            var extensions = metricsCache.extensions ?? []
            let peaks = metrics.peaks
            if !peaks.isEmpty {
                for i in extensions.indices { extensions[i].peakBytes = peaks[extensions[i].bundleIdentifier] }
            }
            metricsCache.withPeaks = extensions
            metricsCache.withPeaksKey = (catalogGeneration, metrics.peaksVersion)
        }
        var hasher = Hasher()
        var live = 0
        for slot in slots.values {
            for instance in slot.instances where instance.isLive {
                hasher.combine(ObjectIdentifier(instance))
                hasher.combine(instance.band)
                hasher.combine(instance.run?.run.cgroup.map(ObjectIdentifier.init))
                live += 1
            }
        }
        hasher.combine(live)
        let fingerprint = hasher.finalize()
        if metricsCache.instancesFingerprint != fingerprint {
            var instances: [MetricsSnapshot.Instance] = []
            instances.reserveCapacity(live)
            for slot in slots.values {
                for instance in slot.instances where instance.isLive {
                    instances.append(
                        .init(
                            bundleIdentifier: instance.identifier,
                            band: JetsamBand(value: instance.band)?.name ?? String(instance.band),
                            cgroup: instance.run?.run.cgroup))
                }
            }
            metricsCache.instances = instances
            metricsCache.instancesFingerprint = fingerprint
        }
        return MetricsSnapshot(
            extensions: metricsCache.withPeaks, instances: metricsCache.instances, pressureLevel: jetsam.level,
            contentKey: .init(catalog: catalogGeneration, peaks: metrics.peaksVersion, instances: fingerprint))
    }
}
