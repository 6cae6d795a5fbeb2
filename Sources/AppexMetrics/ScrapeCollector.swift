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
    private struct Gauges {
        var footprint: [String: CoreMetrics.Gauge] = [:]
        var peak: [String: CoreMetrics.Gauge] = [:]
        var activeLimit: [String: CoreMetrics.Gauge] = [:]
        var inactiveLimit: [String: CoreMetrics.Gauge] = [:]
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
            let installed = Set(snapshot.extensions.map(\.bundleIdentifier))
            for e in snapshot.extensions {
                let id = e.bundleIdentifier
                gauge(&g.footprint, id, MetricCatalog.footprint.name, [("bundle_id", id)]).record(footprints[id] ?? 0)
                gauge(&g.activeLimit, id, MetricCatalog.memoryLimit.name, [("bundle_id", id), ("state", "active")])
                    .record(e.activeLimitBytes)
                gauge(&g.inactiveLimit, id, MetricCatalog.memoryLimit.name, [("bundle_id", id), ("state", "inactive")])
                    .record(e.inactiveLimitBytes)
                let peak = max(e.peakBytes ?? 0, livePeaks[id] ?? 0)
                gauge(&g.peak, id, MetricCatalog.peak.name, [("bundle_id", id)]).record(peak)
            }
            Self.removeAll(&g.footprint, except: installed)
            Self.removeAll(&g.activeLimit, except: installed)
            Self.removeAll(&g.inactiveLimit, except: installed)
            Self.removeAll(&g.peak, except: installed)

            for band in Set(bands.keys).union(g.bands.keys) {
                gauge(&g.bands, band, MetricCatalog.liveInstances.name, [("band", band)]).record(bands[band] ?? 0)
            }
            if g.pressure == nil { g.pressure = CoreMetrics.Gauge(label: MetricCatalog.pressureLevel.name, factory: factory) }
            g.pressure?.record(snapshot.pressureLevel.rawValue)
            for enabled in [true, false] {
                let count = snapshot.extensions.filter { $0.enabled == enabled }.count
                gauge(&g.installed, enabled, MetricCatalog.installed.name, [("enabled", String(enabled))]).record(count)
            }

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

    private static func removeAll(_ gauges: inout [String: CoreMetrics.Gauge], except keep: Set<String>) {
        for (key, gauge) in gauges where !keep.contains(key) {
            gauge.destroy()
            gauges[key] = nil
        }
    }
}
