import CoreMetrics
import Prometheus

/// The process's metrics backend: one Prometheus registry behind swift-metrics. appexd
/// bootstraps it before it creates the supervisor, whose instruments then land here.
public final class MetricsBackend: Sendable {
    public let registry: PrometheusCollectorRegistry

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    /// A swift-metrics factory that registers in this backend's registry, with the help text
    /// and buckets of `MetricCatalog` (what `bootstrap` installs process-wide).
    public var factory: any MetricsFactory { DescribedMetricsFactory(registry: registry) }

    /// Bootstraps swift-metrics with a fresh registry. swift-metrics allows one bootstrap
    /// per process: call once, at start.
    public static func bootstrap() -> MetricsBackend {
        let backend = MetricsBackend()
        MetricsSystem.bootstrap(backend.factory)
        return backend
    }
}
