import AppexSupervisor
import CoreMetrics
import NIOConcurrencyHelpers
import Prometheus

/// What a scrape adds to the counters and histograms the supervisor keeps up to date: the
/// gauges of the moment. The supervisor gives a snapshot of its instances from its loop
/// (no system call there); the footprints come from `sampler` (read in the background, at
/// most its interval old), /proc/self is read here, on the metrics server's thread, and the
/// gauges set before the registry is rendered.
///
/// Series of extensions that are no longer installed, and of bands no instance is in, are set
/// to 0 (bands) or removed (extensions), so the set of series stays bounded by what is
/// installed.
public final class ScrapeCollector: Sendable {
    /// One installed extension's gauges.
    private struct ExtensionGauges {
        var footprint: CoreMetrics.Gauge
        var peak: CoreMetrics.Gauge
        var activeLimit: CoreMetrics.Gauge
        var inactiveLimit: CoreMetrics.Gauge

        func destroy() {
            for g in [footprint, peak, activeLimit, inactiveLimit] { g.destroy() }
        }
    }

    private struct Gauges {
        var extensions: [String: ExtensionGauges] = [:]
        /// The catalog generation the per-extension gauges were made for (nil: none yet).
        var generation: UInt64?
        var pressure: CoreMetrics.Gauge?
        var bands: [String: CoreMetrics.Gauge] = [:]
        var installed: [Bool: CoreMetrics.Gauge] = [:]
        var resident: CoreMetrics.Gauge?
        var cpu: FloatingPointCounter?
        var cpuReported = 0.0
    }

    public let registry: PrometheusCollectorRegistry
    public let sampler: FootprintSampler
    private let factory: DescribedMetricsFactory
    private let state = NIOLockedValueBox(Gauges())

    /// The gauges go straight to `registry` (the one `MetricsBackend.bootstrap` made, where
    /// the supervisor's instruments are too).
    public init(registry: PrometheusCollectorRegistry, sampler: FootprintSampler = FootprintSampler()) {
        self.registry = registry
        self.sampler = sampler
        factory = DescribedMetricsFactory(registry: registry)
    }

    /// Sets the gauges from `snapshot`, the sampler's readings (reading only instances it has
    /// never seen) and /proc/self, then renders every metric in the text exposition format.
    public func render(_ snapshot: MetricsSnapshot) -> [UInt8] {
        sampler.refresh(snapshot, onlyNew: true)
        let readings = sampler.all
        var footprints: [String: Int64] = [:]
        var livePeaks: [String: Int64] = [:]
        var bands: [String: Int] = [:]
        for instance in snapshot.instances {
            bands[instance.band, default: 0] += 1
            // An instance that ended meanwhile has no reading: it counts as nothing.
            guard let cgroup = instance.cgroup, let r = readings[cgroup.memoryDir] else { continue }
            footprints[instance.bundleIdentifier, default: 0] += r.footprint
            livePeaks[instance.bundleIdentifier] = max(livePeaks[instance.bundleIdentifier] ?? 0, r.peak)
        }
        let process = ProcessStatistics.read()
        state.withLockedValue { g in
            // Gauges per extension, and their limits, only when the catalog changed: they are
            // made, set once and destroyed with it. Footprints and peaks on every scrape.
            if g.generation != snapshot.catalogGeneration {
                g.generation = snapshot.catalogGeneration
                let installed = Set(snapshot.extensions.map(\.bundleIdentifier))
                for (id, gauges) in g.extensions where !installed.contains(id) {
                    gauges.destroy()
                    g.extensions[id] = nil
                }
                for e in snapshot.extensions {
                    let id = e.bundleIdentifier
                    let gauges = g.extensions[id] ?? makeGauges(id)
                    g.extensions[id] = gauges
                    gauges.activeLimit.record(e.activeLimitBytes)
                    gauges.inactiveLimit.record(e.inactiveLimitBytes)
                }
                for enabled in [true, false] {
                    let count = snapshot.extensions.filter { $0.enabled == enabled }.count
                    gauge(&g.installed, enabled, MetricCatalog.installed.name, [("enabled", String(enabled))]).record(count)
                }
            }
            for e in snapshot.extensions {
                guard let gauges = g.extensions[e.bundleIdentifier] else { continue }
                gauges.footprint.record(footprints[e.bundleIdentifier] ?? 0)
                gauges.peak.record(max(e.peakBytes ?? 0, livePeaks[e.bundleIdentifier] ?? 0))
            }

            for band in Set(bands.keys).union(g.bands.keys) {
                gauge(&g.bands, band, MetricCatalog.liveInstances.name, [("band", band)]).record(bands[band] ?? 0)
            }
            if g.pressure == nil { g.pressure = CoreMetrics.Gauge(label: MetricCatalog.pressureLevel.name, factory: factory) }
            g.pressure?.record(snapshot.pressureLevel.rawValue)

            if let process {
                if g.resident == nil { g.resident = CoreMetrics.Gauge(label: MetricCatalog.supervisorResident.name, factory: factory) }
                g.resident?.record(process.residentBytes)
                if g.cpu == nil { g.cpu = FloatingPointCounter(label: MetricCatalog.supervisorCPU.name, factory: factory) }
                // A counter only goes up: it is given what was used since the last scrape.
                if process.cpuSeconds > g.cpuReported {
                    g.cpu?.increment(by: process.cpuSeconds - g.cpuReported)
                    g.cpuReported = process.cpuSeconds
                }
            }
        }
        return registry.emitToBuffer()
    }

    private func gauge<Key: Hashable>(_ gauges: inout [Key: CoreMetrics.Gauge], _ key: Key, _ name: String,
                                             _ dimensions: [(String, String)]) -> CoreMetrics.Gauge {
        if let g = gauges[key] { return g }
        let g = CoreMetrics.Gauge(label: name, dimensions: dimensions, factory: factory)
        gauges[key] = g
        return g
    }

    private func makeGauges(_ id: String) -> ExtensionGauges {
        ExtensionGauges(
            footprint: CoreMetrics.Gauge(label: MetricCatalog.footprint.name, dimensions: [("bundle_id", id)], factory: factory),
            peak: CoreMetrics.Gauge(label: MetricCatalog.peak.name, dimensions: [("bundle_id", id)], factory: factory),
            activeLimit: CoreMetrics.Gauge(label: MetricCatalog.memoryLimit.name, dimensions: [("bundle_id", id), ("state", "active")],
                                           factory: factory),
            inactiveLimit: CoreMetrics.Gauge(label: MetricCatalog.memoryLimit.name, dimensions: [("bundle_id", id), ("state", "inactive")],
                                             factory: factory))
    }
}
