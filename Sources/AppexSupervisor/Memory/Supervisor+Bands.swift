import AppexCgroups
import AppexPolicy

// Jetsam bands (XNU's JETSAM_PRIORITY_*, Docs/jetsam.md). An instance working for a request is
// in its active band: the policy's `jetsamBand`, or lower when the host asks for less (a host
// can make its extension a cheaper victim, never a dearer one). When it goes idle it ages, as
// XNU's idle-deferred band does: first to `aging` (10) for the aging delay, then to the
// policy's `idleBand`. A policy whose idle band is above `aging` goes there at once.

extension Supervisor {
    /// How long an idle instance stays in `aging` before its idle band: the supervisor's
    /// option, else half the idle timeout, at most 5 s (so it always ages before it exits).
    func agingDelay(_ policy: ExtensionPointPolicy) -> Duration {
        if let d = options.agingDelay { return d }
        return min(.seconds(5), policy.idleTimeout / 2)
    }

    /// The band `instance` works in for `ticket`.
    func activeBand(_ policy: ExtensionPointPolicy, requested: UInt32?) -> Int {
        let own = policy.jetsamBand.value
        guard let requested else { return own }
        // The named band at or below what was asked, and never above the policy's.
        let asked = Int(clamping: requested)
        let named = JetsamBand.named.map(\.1).filter { $0 <= asked }.max() ?? 0
        return min(own, named)
    }

    /// Moves `instance` to `band`; its time in band restarts only when the band changes.
    func enterBand(_ instance: ExtensionInstance, _ band: Int) {
        guard instance.band != band else { return }
        instance.band = band
        instance.bandSince = MonotonicTime.now
    }

    /// The instance starts (or is starting) work for its ticket.
    func enterActiveBand(_ instance: ExtensionInstance) {
        loop.cancel(instance.agingTimer)
        instance.agingTimer = nil
        guard let policy = catalog[instance.identifier]?.lifecycle else { return }
        enterBand(instance, activeBand(policy, requested: instance.ticket?.requestedBand))
    }

    /// The instance has nothing to do: it ages towards its idle band.
    func enterIdleBands(_ instance: ExtensionInstance) {
        guard let policy = catalog[instance.identifier]?.lifecycle else { return }
        let aging = JetsamBand.aging.value
        loop.cancel(instance.agingTimer)
        instance.agingTimer = nil
        guard policy.idleBand.value < aging else {
            enterBand(instance, policy.idleBand.value)
            return
        }
        enterBand(instance, min(aging, instance.band))
        instance.agingTimer = loop.schedule(after: agingDelay(policy)) { [self] in
            instance.agingTimer = nil
            guard instance.isLive, !instance.isActive else { return }
            enterBand(instance, policy.idleBand.value)
            // Idle bands are where limits tighten and victims come from: look again.
            checkFootprint(instance)
        }
    }
}
