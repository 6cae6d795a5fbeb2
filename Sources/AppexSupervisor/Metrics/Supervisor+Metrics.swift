import AppexPolicy
import AppexWire

// Where the supervisor's events become metrics (SupervisorMetrics). Called on the loop from
// the history hooks (History/Supervisor+History.swift), which see every launch, request and
// termination, and from the memory warning.

extension Supervisor {
    /// The extension point of an installed extension: the label that groups launches,
    /// requests and kills (bounded by the policies, unlike bundle identifiers).
    func extensionPointLabel(_ identifier: String) -> String {
        catalog[identifier]?.installed.extensionPoint ?? "unknown"
    }

    /// A launch that reached check-in: the sandbox's phases and the check-in itself.
    func measureLaunch(_ instance: ExtensionInstance, checkInNanos: UInt64) {
        let point = extensionPointLabel(instance.identifier)
        for (phase, nanos) in instance.launchPhases {
            metrics.launchPhase(phase, nanos: nanos, extensionPoint: point)
        }
        metrics.launchPhase("checkIn", nanos: checkInNanos, extensionPoint: point)
    }

    /// A request's outcome. Its round trip, when the extension answered, is the launch's
    /// last phase, `firstRequest`: cold when the request launched the instance, warm when
    /// it went to an idle one (Apple's warm launch: the process was already there).
    func measureRequest(_ outcome: RequestOutcome, kind: String, bundleIdentifier: String) {
        let point = extensionPointLabel(bundleIdentifier)
        var total: UInt64 = 0
        for phase in outcome.phases {
            if phase.name == "roundTrip" {
                metrics.launchPhase("firstRequest", nanos: phase.microseconds * 1000, extensionPoint: point, cold: outcome.cold)
            } else if phase.name == "total" {
                total = phase.microseconds * 1000
            }
        }
        metrics.request(
            outcome: kind, reason: outcome.reason?.rawValue, extensionPoint: point, cold: outcome.cold,
            totalNanos: total)
        metrics.notePeak(outcome.peakMemoryBytes.map { Int64(clamping: $0) }, bundleIdentifier: bundleIdentifier)
    }

    /// A termination: a kill by its reason, unless the extension exited by itself.
    func measureTermination(_ record: TerminationRecord) {
        metrics.notePeak(record.peakMemoryBytes, bundleIdentifier: record.bundleIdentifier)
        guard record.reason.isCountedAsKill else { return }
        metrics.kill(
            reason: record.reason.rawValue, band: JetsamBand(value: record.band)?.name ?? String(record.band),
            extensionPoint: extensionPointLabel(record.bundleIdentifier), bundleIdentifier: record.bundleIdentifier)
    }

    /// The installed extensions' kill, warning and denial series, made at zero (a catalog
    /// change calls it through the next metrics snapshot).
    func primeMetrics() {
        metrics.prime(
            catalog.values.map { entry in
                let bands = [entry.lifecycle.jetsamBand, entry.lifecycle.idleBand].map(\.name)
                var notified: [String] = []
                for rule in entry.policy.syscallRules {
                    if case .notify = rule.action { notified.append(rule.name) }
                }
                return SupervisorMetrics.Expected(
                    bundleIdentifier: entry.identifier, extensionPoint: entry.installed.extensionPoint,
                    bands: bands[0] == bands[1] ? [bands[0]] : bands, notifiedSyscalls: notified)
            })
    }

    func measureMemoryWarning(_ instance: ExtensionInstance) {
        metrics.memoryWarning(bundleIdentifier: instance.identifier)
    }
}
