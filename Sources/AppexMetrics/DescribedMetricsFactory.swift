import AppexSupervisor
import CoreMetrics
import Prometheus

/// The swift-metrics factory appexd bootstraps: swift-prometheus's registry, with each
/// metric's help text and buckets taken from `MetricCatalog` by name. swift-prometheus's own
/// factory registers every metric with an empty help text (so no `# HELP` line) and one
/// bucket list for all timers; this one is the same mapping with the catalog's descriptions.
struct DescribedMetricsFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry
    let definitions: [String: MetricDefinition]

    /// For a timer the catalog does not know (none today).
    static let fallbackBuckets = MetricCatalog.requestBuckets

    init(registry: PrometheusCollectorRegistry, definitions: [String: MetricDefinition] = MetricCatalog.byName) {
        self.registry = registry
        self.definitions = definitions
    }

    private func help(_ label: String) -> String { definitions[label]?.help ?? "" }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: help(label))
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: help(label))
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(name: label, labels: dimensions, help: help(label)) }
        let buckets = (definitions[label]?.buckets ?? Self.fallbackBuckets).map(Self.seconds)
        return registry.makeValueHistogram(name: label, labels: dimensions, buckets: buckets, help: help(label))
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(name: label, labels: dimensions, help: help(label))
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let buckets = definitions[label]?.buckets ?? Self.fallbackBuckets
        return registry.makeDurationHistogram(name: label, labels: dimensions, buckets: buckets, help: help(label))
    }

    func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    func destroyRecorder(_ handler: any RecorderHandler) {
        if let gauge = handler as? Prometheus.Gauge {
            registry.unregisterGauge(gauge)
        } else if let histogram = handler as? ValueHistogram {
            registry.unregisterValueHistogram(histogram)
        }
    }

    func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? DurationHistogram { registry.unregisterDurationHistogram(histogram) }
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
