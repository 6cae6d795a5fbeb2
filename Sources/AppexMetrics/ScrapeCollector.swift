import AppexSupervisor
import AppexVersion
import CoreMetrics
import NIOConcurrencyHelpers
import Prometheus

/// What a scrape adds to the counters and histograms the supervisor keeps up to date: the
/// gauges of the moment. The supervisor gives a snapshot of its instances from its loop
/// (no system call there); the footprints come from `sampler` (read in the background, at
/// most its interval old), /proc/self is read here, on the metrics server's thread, and the
/// gauges set before the registries are rendered.
///
/// The per-extension series (footprint, peak, limits: four per installed extension, nearly all
/// of a scrape with 1,000 extensions) live in a registry of their own whose rendering is kept
/// and reused while nothing they show changed: the snapshot's content key and the sampler's
/// generation say when. An idle supervisor's scrape then renders only the supervisor's own
/// instruments. Their families never appear in the main registry, so the two texts concatenate
/// into one valid exposition.
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

    /// What the kept rendering was made from.
    private struct RenderKey: Equatable {
        var content: MetricsSnapshot.ContentKey
        var sampler: UInt64
    }

    private struct Gauges {
        var extensions: [String: ExtensionGauges] = [:]
        /// The catalog generation the per-extension gauges were made for (nil: none yet).
        var generation: UInt64?
        /// The per-extension registry's text, and what it shows (nil: make it again).
        var extensionText: [UInt8] = []
        var extensionKey: RenderKey?
        var pressure: CoreMetrics.Gauge?
        var bands: [String: CoreMetrics.Gauge] = [:]
        var installed: [Bool: CoreMetrics.Gauge] = [:]
        var process: ProcessGauges?
    }

    /// appexd's own figures: the `appex_supervisor_*` pair and the standard `process_*` set.
    private struct ProcessGauges {
        var resident: CoreMetrics.Gauge
        var cpu: FloatingPointCounter
        var standardCPU: FloatingPointCounter
        var standardResident: CoreMetrics.Gauge
        var virtual: CoreMetrics.Gauge
        var startTime: CoreMetrics.Gauge
        var openFDs: CoreMetrics.Gauge
        var maxFDs: CoreMetrics.Gauge
        var cpuReported = 0.0

        init(_ f: DescribedMetricsFactory) {
            resident = CoreMetrics.Gauge(label: MetricCatalog.supervisorResident.name, factory: f)
            cpu = FloatingPointCounter(label: MetricCatalog.supervisorCPU.name, factory: f)
            standardCPU = FloatingPointCounter(label: MetricCatalog.processCPU.name, factory: f)
            standardResident = CoreMetrics.Gauge(label: MetricCatalog.processResident.name, factory: f)
            virtual = CoreMetrics.Gauge(label: MetricCatalog.processVirtual.name, factory: f)
            startTime = CoreMetrics.Gauge(label: MetricCatalog.processStartTime.name, factory: f)
            openFDs = CoreMetrics.Gauge(label: MetricCatalog.processOpenFDs.name, factory: f)
            maxFDs = CoreMetrics.Gauge(label: MetricCatalog.processMaxFDs.name, factory: f)
        }

        mutating func record(_ s: ProcessStatistics) {
            resident.record(s.residentBytes)
            standardResident.record(s.residentBytes)
            virtual.record(s.virtualBytes)
            startTime.record(s.startTimeSeconds)
            openFDs.record(s.openDescriptors)
            maxFDs.record(s.maxDescriptors)
            // A counter only goes up: it is given what was used since the last scrape.
            if s.cpuSeconds > cpuReported {
                cpu.increment(by: s.cpuSeconds - cpuReported)
                standardCPU.increment(by: s.cpuSeconds - cpuReported)
                cpuReported = s.cpuSeconds
            }
        }
    }

    public let registry: PrometheusCollectorRegistry
    public let sampler: FootprintSampler
    private let factory: DescribedMetricsFactory
    /// The per-extension series only.
    private let extensionRegistry = PrometheusCollectorRegistry()
    private let extensionFactory: DescribedMetricsFactory
    private let state = NIOLockedValueBox(Gauges())
    /// `appex_build_info{version="…"} 1`, set once: the registry renders it with the rest.
    private let buildInfo: CoreMetrics.Gauge

    /// The gauges of the moment go to `registry` (the one `MetricsBackend.bootstrap` made,
    /// where the supervisor's instruments are too), the per-extension ones to a registry of
    /// their own.
    public init(registry: PrometheusCollectorRegistry, sampler: FootprintSampler = FootprintSampler()) {
        self.registry = registry
        self.sampler = sampler
        factory = DescribedMetricsFactory(registry: registry)
        extensionFactory = DescribedMetricsFactory(registry: extensionRegistry)
        buildInfo = CoreMetrics.Gauge(
            label: MetricCatalog.buildInfo.name, dimensions: [("version", AppexVersion.current)],
            factory: factory)
        buildInfo.record(1)
    }

    /// Sets the gauges from `snapshot`, the sampler's readings (reading only instances it has
    /// never seen) and /proc/self, then renders every metric in the text exposition format.
    public func render(_ snapshot: MetricsSnapshot) -> [UInt8] {
        let kept = state.withLockedValue { $0.extensionKey }
        // New instances show at once: the sampler reads those it has never seen (none when
        // the instances are the ones the kept rendering was made from).
        if snapshot.contentKey == nil || snapshot.contentKey != kept?.content {
            sampler.refresh(snapshot, onlyNew: true)
        }
        let key = snapshot.contentKey.map { RenderKey(content: $0, sampler: sampler.generation) }
        let process = ProcessStatistics.read()
        return state.withLockedValue { g in
            if key == nil || key != g.extensionKey {
                setPerExtensionGauges(&g, snapshot)
                g.extensionText = extensionRegistry.emitToBuffer()
                g.extensionKey = key
            }
            if g.pressure == nil { g.pressure = CoreMetrics.Gauge(label: MetricCatalog.pressureLevel.name, factory: factory) }
            g.pressure?.record(snapshot.pressureLevel.rawValue)
            if let process {
                if g.process == nil { g.process = ProcessGauges(factory) }
                g.process?.record(process)
            }
            return registry.emitToBuffer() + g.extensionText
        }
    }

    /// Everything that follows from the extensions and instances: per-extension gauges (made
    /// and destroyed with the catalog, limits set then), footprints and peaks, instances by band,
    /// installed counts.
    private func setPerExtensionGauges(_ g: inout Gauges, _ snapshot: MetricsSnapshot) {
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
        // A snapshot without a content key may hold any extensions: made again every time.
        let generation = snapshot.contentKey?.catalog
        if generation == nil || g.generation != generation {
            g.generation = generation
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
    }

    private func gauge<Key: Hashable>(
        _ gauges: inout [Key: CoreMetrics.Gauge], _ key: Key, _ name: String,
        _ dimensions: [(String, String)]
    ) -> CoreMetrics.Gauge {
        if let g = gauges[key] { return g }
        let g = CoreMetrics.Gauge(label: name, dimensions: dimensions, factory: factory)
        gauges[key] = g
        return g
    }

    private func makeGauges(_ id: String) -> ExtensionGauges {
        let f = extensionFactory
        return ExtensionGauges(
            footprint: CoreMetrics.Gauge(label: MetricCatalog.footprint.name, dimensions: [("bundle_id", id)], factory: f),
            peak: CoreMetrics.Gauge(label: MetricCatalog.peak.name, dimensions: [("bundle_id", id)], factory: f),
            activeLimit: CoreMetrics.Gauge(
                label: MetricCatalog.memoryLimit.name, dimensions: [("bundle_id", id), ("state", "active")],
                factory: f),
            inactiveLimit: CoreMetrics.Gauge(
                label: MetricCatalog.memoryLimit.name, dimensions: [("bundle_id", id), ("state", "inactive")],
                factory: f))
    }
}
