import AppexKillReason
import AppexWire
import CoreMetrics

/// The supervisor's instruments, through the swift-metrics API: whatever backend the process
/// bootstrapped (appexd: Prometheus; tests, the CLI and the benchmark: none, so every record
/// is a no-op). Loop thread only, except `deniedSyscall`.
///
/// swift-metrics makes a handler per label set through the backend's factory (a lock and a
/// lookup there); the loop pays that once per label set, then a dictionary lookup and an
/// atomic add or a bucket increment per event, a small part of a warm round trip.
final class SupervisorMetrics: @unchecked Sendable {
    private struct LaunchKey: Hashable {
        var phase: String
        var extensionPoint: String
        var start: String
    }

    private struct RequestKey: Hashable {
        var outcome: String
        var reason: String
        var extensionPoint: String
    }

    private struct KillKey: Hashable {
        var reason: String
        var band: String
        var extensionPoint: String
        /// Only with `killsByBundle`.
        var bundleIdentifier: String?
    }

    private struct DurationKey: Hashable {
        var extensionPoint: String
        var cold: Bool
    }

    private var launchTimers: [LaunchKey: CoreMetrics.Timer] = [:]
    private var requestTimers: [DurationKey: CoreMetrics.Timer] = [:]
    private var requestCounters: [RequestKey: CoreMetrics.Counter] = [:]
    private var refusalCounters: [String: CoreMetrics.Counter] = [:]
    private var buildTimers: [String: CoreMetrics.Timer] = [:]
    private var killCounters: [KillKey: CoreMetrics.Counter] = [:]
    private var warningCounters: [String: CoreMetrics.Counter] = [:]
    private var deniedCounters: Set<DeniedKey> = []
    /// `appex_kills_total` also by `bundle_id` (SupervisorOptions.killMetricsByBundle): set
    /// before the first kill, since a metric keeps the label names it was first made with.
    var killsByBundle = false
    private var transferCounters: [String: CoreMetrics.Counter] = [:]
    private var transferByteCounters: [String: CoreMetrics.Counter] = [:]
    /// Bundle identifier → largest cgroup high-water mark seen for any of its instances.
    private(set) var peaks: [String: Int64] = [:]
    /// Changes whenever `peaks` does.
    private(set) var peaksVersion: UInt64 = 0

    /// One launch phase (nanoseconds) of an extension of `extensionPoint`.
    func launchPhase(_ phase: String, nanos: UInt64, extensionPoint: String, cold: Bool = true) {
        let key = LaunchKey(phase: phase, extensionPoint: extensionPoint, start: cold ? "cold" : "warm")
        let timer =
            launchTimers[key]
            ?? {
                let t = CoreMetrics.Timer(
                    label: MetricCatalog.launchDuration.name,
                    dimensions: [
                        ("phase", key.phase), ("extension_point", key.extensionPoint), ("start", key.start),
                    ])
                launchTimers[key] = t
                return t
            }()
        timer.recordNanoseconds(Int64(clamping: nanos))
    }

    /// An extension's sandbox built, by a first launch or ahead of one.
    func sandboxBuilt(trigger: String, nanos: UInt64) {
        let timer =
            buildTimers[trigger]
            ?? {
                let t = CoreMetrics.Timer(label: MetricCatalog.sandboxBuilds.name, dimensions: [("trigger", trigger)])
                buildTimers[trigger] = t
                return t
            }()
        timer.recordNanoseconds(Int64(clamping: nanos))
    }

    /// A request's outcome; `totalNanos`: admission to outcome.
    func request(outcome: String, reason: String?, extensionPoint: String, cold: Bool, totalNanos: UInt64) {
        let key = RequestKey(outcome: outcome, reason: reason ?? "", extensionPoint: extensionPoint)
        let counter =
            requestCounters[key]
            ?? {
                let c = CoreMetrics.Counter(
                    label: MetricCatalog.requests.name,
                    dimensions: [
                        ("outcome", key.outcome), ("reason", key.reason), ("extension_point", key.extensionPoint),
                    ])
                requestCounters[key] = c
                return c
            }()
        counter.increment()
        let durationKey = DurationKey(extensionPoint: extensionPoint, cold: cold)
        let timer =
            requestTimers[durationKey]
            ?? {
                let t = CoreMetrics.Timer(
                    label: MetricCatalog.requestDuration.name,
                    dimensions: [
                        ("extension_point", extensionPoint), ("start", cold ? "cold" : "warm"),
                    ])
                requestTimers[durationKey] = t
                return t
            }()
        timer.recordNanoseconds(Int64(clamping: totalNanos))
    }

    /// A request refused before admission. The reasons are appexd's own few, so the label
    /// stays bounded whatever a host asks for.
    func refusal(reason: String) {
        let counter =
            refusalCounters[reason]
            ?? {
                let c = CoreMetrics.Counter(label: MetricCatalog.refusals.name, dimensions: [("reason", reason)])
                refusalCounters[reason] = c
                return c
            }()
        counter.increment()
    }

    func kill(reason: String, band: String, extensionPoint: String, bundleIdentifier: String) {
        killCounter(reason: reason, band: band, extensionPoint: extensionPoint, bundleIdentifier: bundleIdentifier).increment()
    }

    private func killCounter(reason: String, band: String, extensionPoint: String, bundleIdentifier: String) -> CoreMetrics.Counter {
        let key = KillKey(
            reason: reason, band: band, extensionPoint: extensionPoint,
            bundleIdentifier: killsByBundle ? bundleIdentifier : nil)
        if let c = killCounters[key] { return c }
        var dimensions = [("reason", key.reason), ("band", key.band), ("extension_point", key.extensionPoint)]
        if let id = key.bundleIdentifier { dimensions.append(("bundle_id", id)) }
        let c = CoreMetrics.Counter(label: MetricCatalog.kills.name, dimensions: dimensions)
        killCounters[key] = c
        return c
    }

    func memoryWarning(bundleIdentifier: String) {
        warningCounter(bundleIdentifier).increment()
    }

    private func warningCounter(_ bundleIdentifier: String) -> CoreMetrics.Counter {
        if let c = warningCounters[bundleIdentifier] { return c }
        let c = CoreMetrics.Counter(label: MetricCatalog.memoryWarnings.name, dimensions: [("bundle_id", bundleIdentifier)])
        warningCounters[bundleIdentifier] = c
        return c
    }

    /// What an installed extension's kills, warnings and denials would be counted under.
    struct Expected {
        var bundleIdentifier: String
        var extensionPoint: String
        /// The bands its instances are in when they end (the policy's active and idle bands).
        var bands: [String]
        /// The system calls its policy answers through the notifier.
        var notifiedSyscalls: [String]
    }

    private struct DeniedKey: Hashable {
        var bundleIdentifier: String
        var syscall: String
    }

    /// Makes the series `expected` will be counted under, at zero, so that they are exported
    /// from the start: a counter that first appears at 1 loses that first event to `rate()` and
    /// `increase()`, and a panel or an alert on a missing series reads "no data", not 0.
    /// Counters are never removed (one that vanished and came back would read as a reset).
    func prime(_ expected: [Expected]) {
        for e in expected {
            for reason in KillReason.exportedAtZero {
                for band in e.bands {
                    _ = killCounter(
                        reason: reason.rawValue, band: band, extensionPoint: e.extensionPoint,
                        bundleIdentifier: e.bundleIdentifier)
                }
            }
            _ = warningCounter(e.bundleIdentifier)
            for syscall in e.notifiedSyscalls {
                let key = DeniedKey(bundleIdentifier: e.bundleIdentifier, syscall: syscall)
                if deniedCounters.insert(key).inserted { Self.deniedSyscall(bundleIdentifier: e.bundleIdentifier, syscall: syscall, by: 0) }
            }
        }
    }

    /// A cgroup high-water mark read for an instance of `bundleIdentifier`.
    func notePeak(_ bytes: Int64?, bundleIdentifier: String) {
        guard let bytes, bytes > (peaks[bundleIdentifier] ?? -1) else { return }
        peaks[bundleIdentifier] = bytes
        peaksVersion &+= 1
    }

    /// Forgets the peaks of extensions no longer installed. (Counters stay: a counter that
    /// vanished and came back would read as a reset.)
    func forgetPeaks(keeping installed: Set<String>) {
        let kept = peaks.filter { installed.contains($0.key) }
        if kept.count != peaks.count {
            peaks = kept
            peaksVersion &+= 1
        }
    }

    /// From the seccomp notifier's thread: one denied call. Rare, and the backend's factory
    /// is thread-safe, so no cache: the handler is looked up each time.
    static func deniedSyscall(bundleIdentifier: String, syscall: String) {
        deniedSyscall(bundleIdentifier: bundleIdentifier, syscall: syscall, by: 1)
    }

    private static func deniedSyscall(bundleIdentifier: String, syscall: String, by n: Int64) {
        CoreMetrics.Counter(
            label: MetricCatalog.deniedSyscalls.name,
            dimensions: [("bundle_id", bundleIdentifier), ("syscall", syscall)]
        ).increment(by: n)
    }

    /// A background transfer ended (`completed`, `failed`, `cancelled`) or was refused
    /// (`refused-<reason>`); the bytes it moved count by kind.
    func transfer(outcome: String, kind: String? = nil, bytes: Int64 = 0) {
        let counter =
            transferCounters[outcome]
            ?? {
                let c = CoreMetrics.Counter(label: MetricCatalog.transfers.name, dimensions: [("outcome", outcome)])
                transferCounters[outcome] = c
                return c
            }()
        counter.increment()
        guard let kind, bytes > 0 else { return }
        let bytesCounter =
            transferByteCounters[kind]
            ?? {
                let c = CoreMetrics.Counter(label: MetricCatalog.transferBytes.name, dimensions: [("kind", kind)])
                transferByteCounters[kind] = c
                return c
            }()
        bytesCounter.increment(by: bytes)
    }
}
