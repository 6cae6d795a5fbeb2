import AppexCgroups
import AppexWire
import Foundation

// What `appex jetsam` shows, like XNU's memorystatus priority list: every live instance in
// victim order, with its band, footprint, limits and time in band, and the pressure level;
// `appex top` draws the same report, with each instance's CPU time and launch time.

extension Supervisor {
    /// The jetsam list now. From any thread.
    public func jetsamReport() async -> JetsamReport {
        await onLoop { s in s.makeJetsamReport() }
    }

    /// The pressure level's changes so far, oldest first. From any thread.
    public func pressureTransitions() async -> [PressureTransition] {
        await onLoop { s in s.jetsam.transitions }
    }

    /// The pressure level now. From any thread.
    public func pressureLevel() async -> PressureLevel {
        await onLoop { s in s.jetsam.level }
    }

    func makeJetsamReport() -> JetsamReport {
        let now = MonotonicTime.now
        let entries = victimOrder(withFootprints: true).map { instance, c -> JetsamEntry in
            let memory = catalog[instance.identifier]?.lifecycle.memory
            func bytes(_ v: Int64?) -> UInt64 { UInt64(max(v ?? 0, 0)) }
            return JetsamEntry(
                bundleIdentifier: instance.identifier, instance: UInt64(instance.number), pid: instance.pid,
                band: UInt32(clamping: instance.band), state: instance.state.rawValue, footprintBytes: bytes(c.footprint),
                activeSoftLimitBytes: bytes(memory?.activeSoftLimit.bytes), activeHardLimitBytes: bytes(memory?.activeHardLimit.bytes),
                inactiveSoftLimitBytes: bytes(memory?.inactiveSoftLimit.bytes),
                inactiveHardLimitBytes: bytes(memory?.inactiveHardLimit.bytes),
                active: instance.isActive, overSoftLimit: instance.overSoftLimit,
                timeInBandMicros: now >= instance.bandSince ? (now - instance.bandSince) / 1000 : 0,
                cpuMicros: ProcessCPUTime.micros(pid: instance.pid),
                lastLaunchMicros: instance.checkedInAt > 0 ? (instance.checkedInAt - instance.launchStartedAt) / 1000 : nil)
        }
        var footprint = jetsam.lastFootprint
        if let parent = jetsam.parent, let f = try? parent.hierarchicalFootprint().total { footprint = f }
        let available = (try? SystemMemory.read().available) ?? jetsam.lastAvailable
        return JetsamReport(
            level: jetsam.level.description, budgetBytes: jetsam.ladder.budget.map { UInt64(max($0, 0)) },
            footprintBytes: UInt64(max(footprint, 0)), availableBytes: available.map { UInt64(max($0, 0)) },
            entries: entries)
    }
}
