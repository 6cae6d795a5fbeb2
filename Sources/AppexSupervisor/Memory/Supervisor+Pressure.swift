import AppexCgroups
import AppexPolicy
import AppexWire
import Dispatch
import Foundation

// The memory governor: one pressure level for all of Appex, and what it does about it
// (Docs/jetsam.md). Normal → nothing; Warning → memory warnings, lowest bands first;
// Critical → kills in victim order (VictimOrder), one at a time: the next victim is chosen
// only once the previous one's memory is returned (its pidfd said it exited and its cgroup
// is removed), from the facts read then (PressureGovernor says when a kill is due).
//
// What wakes it, all event-driven on the loop:
//   - the memory budget: usage thresholds on the parent cgroup at the ladder's lines (the
//     charge is never below the footprint, so the footprint reaching a line is preceded by
//     the charge crossing it), then the parent's hierarchical footprint decides;
//   - v1 vmpressure on the parent (`memory.pressure_level`, medium and critical, local to the
//     parent: reclaim at the budget itself, not at one extension's own limit);
//   - v2: the parent's charge read against the same lines by a timer on the loop, sooner the
//     nearer the next line (no usage thresholds on v2), and PSI triggers on the parent's own
//     `memory.pressure` (the extensions' stall: some → Warning, full → Critical);
//   - PSI triggers on system memory stalls (some → Warning; full → Critical only while
//     MemAvailable is under twice the floor, since one extension thrashing at its own cgroup
//     limit also stalls), with the window the kernel accepts (2 s granularity without
//     CAP_SYS_RESOURCE: detected at start);
//   - MemAvailable, read at every evaluation, as a floor.
// A kernel signal holds its level for one window after it fires; a timer re-evaluates when
// the hold ends. A signal raises the level; it decides a kill only if it came after the last
// victim's memory was returned (PressureGovernor). While the charge is above a line and the
// footprint is not, the governor reads again after 100 ms (10 ms next to the critical line),
// doubling to 1.6 s: the only poll, bounded to that window.

/// The governor's state; touched only on the loop.
final class JetsamState: @unchecked Sendable {
    var governor = PressureGovernor(ladder: PressureLadder(budget: nil, availableFloor: 0), systemPressure: false)
    var level: PressureLevel { governor.level }
    var ladder: PressureLadder { governor.ladder }
    var parent: ExtensionCgroup?
    /// Kernel notification objects, kept alive while registered.
    var thresholds: [ThresholdWatcher] = []
    var vmpressure: [CgroupEvent] = []
    var psi: [MemoryPressureMonitor] = []
    var holdTimer: EventLoop.TimerID?
    let recheck = GapRecheck()
    /// The victim killed and not yet gone.
    var victim: ExtensionInstance?
    /// Level changes, newest last (bounded), for `appex jetsam` and the tests.
    var transitions: [PressureTransition] = []
    /// What the last evaluation read.
    var lastFootprint: Int64 = 0
    var lastAvailable: Int64?
}

/// One change of the pressure level.
public struct PressureTransition: Sendable, Equatable {
    public var from: PressureLevel
    public var to: PressureLevel
    public var at: Date
    /// What the governor read then: all extensions' footprint, and why it looked.
    public var footprintBytes: Int64
    public var cause: String
}

extension Supervisor {
    static let maximumTransitions = 200
    static let vmpressureHold: Duration = .seconds(1)

    /// On the loop, once at start: the budget, the ladder and the kernel's signals.
    func startMemoryGovernor() {
        loop.assertOnLoop()
        let floor: Int64
        if let f = options.availableFloor {
            floor = f
        } else {
            let total = (try? SystemMemory.read().total) ?? 0
            floor = min(max(total / 50, 64 << 20), 512 << 20)
        }
        jetsam.governor = PressureGovernor(
            ladder: PressureLadder(budget: options.memoryBudget, availableFloor: floor),
            systemPressure: options.watchSystemPressure)
        let budget = options.memoryBudget
        if let budget {
            do {
                let limits = BudgetLimits(budget: budget, headroom: options.budgetHeadroom)
                try cgroups.setBudgetLimits(hard: limits.hard, high: limits.high)
                jetsam.parent = cgroups.parentCgroup()
                logger.info(
                    "memory budget \(Self.mib(budget)) for all extensions, the kernel's limit at \(Self.mib(limits.hard)) (\(jetsam.parent?.paths.first ?? ""))"
                )
            } catch {
                logger.error("memory budget not applied: \(error)")
            }
        } else {
            try? cgroups.prepare()
            jetsam.parent = cgroups.parentCgroup()
        }
        let parent = jetsam.parent
        let lines = jetsam.ladder.lines
        let logger = self.logger
        // Off the loop: each v1 registration waits for an RCU grace period.
        workers.async { [self] in
            var thresholds: [ThresholdWatcher] = []
            var vm: [CgroupEvent] = []
            var psi: [MemoryPressureMonitor] = []
            var cgroupPSI: [MemoryPressureMonitor] = []
            if let parent, budget != nil {
                // v1: a usage threshold per line, each its own eventfd. v2: one watcher reads
                // the charge against all of them (no usage thresholds there).
                for group in parent.version == .v1 ? lines.map({ [$0] }) : [lines] {
                    do { thresholds.append(try parent.makeThresholdWatcher(lines: group)) } catch {
                        logger.warning("memory budget: no usage threshold at \(group.map { Self.mib($0) }): \(error)")
                    }
                }
                // v2: the extensions' own stall on memory, from their parent's memory.pressure.
                for kind in [MemoryPressureMonitor.Kind.some, .full] {
                    do {
                        if let m = try parent.makePressureMonitor(kind: kind, stall: .milliseconds(100), window: .seconds(1)) {
                            cgroupPSI.append(m)
                        }
                    } catch { logger.warning("memory budget: no PSI \(kind.rawValue) trigger on the parent: \(error)") }
                }
                if parent.version == .v1 {
                    for level in ["medium", "critical"] {
                        do { vm.append(try parent.makeVMPressureWatcher(level: level)) } catch {
                            logger.warning("memory budget: no vmpressure \(level) events: \(error)")
                        }
                    }
                }
            }
            for kind in options.watchSystemPressure ? [MemoryPressureMonitor.Kind.some, .full] : [] {
                do {
                    psi.append(try MemoryPressureMonitor.system(kind: kind, stall: .milliseconds(100), window: .seconds(1)))
                } catch {
                    logger.warning("no PSI \(kind.rawValue) trigger: \(error)")
                }
            }
            let t = thresholds, v = vm, p = psi, c = cgroupPSI
            loop.post { [self] in armGovernor(thresholds: t, vmpressure: v, psi: p, parentPSI: c) }
        }
    }

    private func armGovernor(
        thresholds: [ThresholdWatcher], vmpressure: [CgroupEvent], psi: [MemoryPressureMonitor],
        parentPSI: [MemoryPressureMonitor]
    ) {
        guard !shuttingDown else { return }
        for w in thresholds {
            do {
                let line = w.lines.map { _ in "a line" } ?? Self.mib(w.bytes)
                try loop.register(w.fd) { [self] in
                    if w.acknowledge() { evaluatePressure("the extensions' charge crossed \(line)") }
                }
                jetsam.thresholds.append(w)
            } catch { logger.warning("memory budget: cannot watch a threshold: \(error)") }
        }
        for (event, level) in zip(vmpressure, [PressureLevel.warning, .critical]) {
            do {
                try loop.register(event.fd) { [self] in
                    event.acknowledge()
                    hold(level, .budget, for: Self.vmpressureHold, "vmpressure \(level == .critical ? "critical" : "medium") at the budget")
                }
                jetsam.vmpressure.append(event)
            } catch { logger.warning("memory budget: cannot watch vmpressure: \(error)") }
        }
        for monitor in psi {
            do {
                try loop.registerPriority(monitor.fd) { [self] in
                    // A stall alone may be one extension thrashing at its own cgroup limit
                    // (memcg reclaim counts in the system's PSI): it warns. A full stall while
                    // MemAvailable is also low (under twice the floor) is critical.
                    var level = PressureLevel.warning
                    if monitor.kind == .full, let available = try? SystemMemory.read().available,
                        available < jetsam.ladder.availableFloor * 2
                    {
                        level = .critical
                    }
                    hold(
                        level, .host, for: monitor.window,
                        "PSI \(monitor.kind.rawValue) stall of 100 ms within \(monitor.window.wholeMilliseconds) ms")
                }
                jetsam.psi.append(monitor)
                logger.debug("PSI \(monitor.kind.rawValue) trigger armed, window \(monitor.window.wholeMilliseconds) ms")
            } catch { logger.warning("cannot watch PSI: \(error)") }
        }
        for monitor in parentPSI {
            do {
                try loop.registerPriority(monitor.fd) { [self] in
                    // Only the extensions stall here: some of them stalled warns; all of them
                    // stalled (full) is critical. But the parent also counts an extension
                    // stalled at its own limits (memory.high throttling, reclaim at
                    // memory.max), no shortage of the budget: with one extension busy that
                    // alone is "full" (seen live on v2: critical, and both extensions killed,
                    // at 48 MiB of a 100 MiB budget). It counts only with the charge at the
                    // budget's lowest line or above.
                    guard let line = jetsam.ladder.lines.min(),
                        ((try? jetsam.parent?.memoryCurrent()) ?? 0) >= line
                    else { return }
                    hold(
                        monitor.kind == .full ? .critical : .warning, .budget, for: monitor.window,
                        "the extensions' PSI \(monitor.kind.rawValue) stall of 100 ms within \(monitor.window.wholeMilliseconds) ms")
                }
                jetsam.psi.append(monitor)
            } catch { logger.warning("memory budget: cannot watch the parent's PSI: \(error)") }
        }
        evaluatePressure("start")
    }

    /// Stops watching (at shutdown, before the parent cgroup goes).
    func stopMemoryGovernor() {
        for w in jetsam.thresholds { loop.unregister(w.fd) }
        for e in jetsam.vmpressure { loop.unregister(e.fd) }
        for m in jetsam.psi { loop.unregister(m.fd) }
        jetsam.thresholds = []
        jetsam.vmpressure = []
        jetsam.psi = []
        loop.cancel(jetsam.holdTimer)
        jetsam.holdTimer = nil
        jetsam.recheck.cancel(loop)
    }

    /// A kernel signal: `level` holds for `duration`, then the level is read again.
    private func hold(_ level: PressureLevel, _ source: PressureSignal.Source, for duration: Duration, _ cause: String) {
        let now = MonotonicTime.now
        jetsam.governor.add(
            PressureSignal(
                level: level, source: source, cause: cause, at: now,
                until: now + duration.wholeNanoseconds))
        scheduleHoldExpiry()
        evaluatePressure(cause)
    }

    private func scheduleHoldExpiry() {
        loop.cancel(jetsam.holdTimer)
        jetsam.holdTimer = nil
        guard let next = jetsam.governor.nextExpiry else { return }
        let now = MonotonicTime.now
        let after = Duration.nanoseconds(Int64(next > now ? next - now : 0) + 1_000_000)
        jetsam.holdTimer = loop.schedule(after: after) { [self] in
            jetsam.holdTimer = nil
            evaluatePressure("a kernel signal's hold ended")
            scheduleHoldExpiry()
        }
    }

    /// Reads the total, sets the level, and acts on it.
    func evaluatePressure(_ cause: String) {
        guard !shuttingDown else { return }
        let (footprint, charged) = readExtensionsFootprint()
        // v2: the watcher judges the next crossing from this reading (a fall and a rise
        // between its own looks would otherwise go unseen).
        if charged > 0 { for w in jetsam.thresholds { w.sync(usage: charged) } }
        let available = options.watchSystemPressure ? try? SystemMemory.read().available : nil
        jetsam.lastFootprint = footprint
        jetsam.lastAvailable = available
        let from = jetsam.level
        let due = jetsam.governor.evaluate(footprint: footprint, available: available, now: MonotonicTime.now)
        let next = jetsam.level
        if next != from {
            jetsam.transitions.append(PressureTransition(from: from, to: next, at: Date(), footprintBytes: footprint, cause: cause))
            if jetsam.transitions.count > Self.maximumTransitions { jetsam.transitions.removeFirst() }
            let budget = jetsam.ladder.budget.map { " of \(Self.mib($0))" } ?? ""
            logger.notice("memory pressure \(from) → \(next): footprint \(Self.mib(footprint))\(budget), \(cause)")
            if next == .normal { for i in allLiveInstances { i.pressureWarned = false } }
        }
        if jetsam.level >= .warning || due != nil {
            // One ordering serves the warnings and the kill; the warnings go out first.
            let victims = victimOrder()
            warnForPressure(victims)
            if let due { killNextVictim(victims, footprint: footprint, due) }
        }
        scheduleBudgetRecheck(footprint: footprint, charged: charged)
    }

    /// All extensions' footprint, and the parent's charge. Near a line, the sum of each live
    /// instance's own statistics: the kernel flushes the parent's hierarchical totals lazily
    /// (read alone, they lagged the charge by up to 150 MiB for over a second on Linux 6.18:
    /// Docs/jetsam.md, "Benchmark"), and after a kill they may still count the dead victim,
    /// whose cgroup is gone; a kill decided on that would be one too many.
    private func readExtensionsFootprint() -> (footprint: Int64, charged: Int64) {
        guard let parent = jetsam.parent else { return (0, 0) }
        let charged = (try? parent.memoryCurrent()) ?? 0
        var footprint: Int64
        if let lowest = jetsam.ladder.lines.min(), charged + GapRecheck.chargeSlack >= lowest {
            footprint = allLiveInstances.reduce(0) { $0 + ((try? $1.run?.run.cgroup?.footprint()) ?? 0) }
        } else {
            footprint = (try? parent.hierarchicalFootprint().total) ?? 0
        }
        // The footprint is part of the charge; a larger total is stale.
        if charged > 0 { footprint = min(footprint, charged) }
        return (footprint, charged)
    }

    var allLiveInstances: [ExtensionInstance] { slots.values.flatMap { $0.instances.filter(\.isLive) } }

    /// Instances that can be warned or killed, first victim first. Footprints are read (a
    /// memory.stat each) only when `withFootprints` or the order needs them; else they are 0.
    func victimOrder(withFootprints: Bool = false) -> [(ExtensionInstance, VictimOrder.Candidate)] {
        let read = withFootprints || options.victimOrder.needsFootprints
        let candidates = allLiveInstances.compactMap { i -> (ExtensionInstance, VictimOrder.Candidate)? in
            guard i.run != nil, i.state != .terminating, i.killReason == nil else { return nil }
            let footprint: Int64 = read ? ((try? i.run?.run.cgroup?.footprint()) ?? 0) : 0
            return (
                i,
                VictimOrder.Candidate(
                    bundleIdentifier: i.identifier, instance: i.number, band: i.band, bandSince: i.bandSince,
                    footprint: footprint, overSoftLimit: i.overSoftLimit)
            )
        }
        let order = options.victimOrder
        return candidates.sorted { order.precedes($0.1, $1.1) }
    }

    /// Warning and above: every instance not yet warned in this episode, lowest bands first.
    private func warnForPressure(_ victims: [(ExtensionInstance, VictimOrder.Candidate)]) {
        for (instance, _) in victims where !instance.pressureWarned {
            instance.pressureWarned = true
            sendMemoryWarning(instance, "memory pressure \(jetsam.level)")
        }
    }

    /// A kill is due: the first victim dies. The message says what decided it.
    private func killNextVictim(
        _ victims: [(ExtensionInstance, VictimOrder.Candidate)], footprint: Int64,
        _ cause: PressureGovernor.KillCause
    ) {
        guard let (instance, c) = victims.first else {
            logger.warning("memory pressure critical and no extension left to kill")
            return
        }
        jetsam.victim = instance
        jetsam.governor.killed()
        let budget = jetsam.ladder.budget.map { " of the \(Self.mib($0)) budget" } ?? ""
        let why: String
        switch cause {
        case .footprint: why = "memory pressure critical (all extensions: \(Self.mib(footprint))\(budget))"
        case .memAvailable(let a):
            why =
                "host memory short: MemAvailable \(Self.mib(a)) under the floor of \(Self.mib(jetsam.ladder.availableFloor)) (all extensions: \(Self.mib(footprint))\(budget))"
        case .signal(let s):
            why =
                "memory pressure critical on \(s.cause), after the last victim's memory was returned (all extensions: \(Self.mib(footprint))\(budget))"
        }
        let soft = c.overSoftLimit ? ", over its soft limit" : ""
        // The decision's moment and footprint (the record's), read once, also go in the message.
        noteEndTrigger(instance)
        let own = instance.footprintAtTrigger.map { ", footprint \(Self.mib($0))" } ?? ""
        kill(instance, reason: .memoryPressure, "\(why); first victim: band \(c.band)\(soft)\(own)")
    }

    /// From finishExit, once the victim's cgroup is removed: its memory is returned. The
    /// level is judged again from what is there now (and the next one dies if that says so).
    func pressureVictimGone(_ instance: ExtensionInstance) {
        guard jetsam.victim === instance else { return }
        jetsam.victim = nil
        jetsam.governor.victimGone(at: MonotonicTime.now)
        evaluatePressure("a victim is gone")
    }

    /// Next to the critical line the first look comes sooner, as next to an instance's fatal
    /// line: the charge crosses it a little before the footprint does (kernel memory, cache).
    private func scheduleBudgetRecheck(footprint: Int64, charged: Int64) {
        let lines = jetsam.ladder.lines
        let inGap = { (line: Int64) in GapRecheck.inGap(line: line, charged: charged, footprint: footprint) }
        let nearCritical = lines.max().map(inGap) ?? false
        jetsam.recheck.update(
            gap: lines.contains(where: inGap),
            first: nearCritical ? Self.memoryRecheckNearFatal : Self.memoryRecheckFirst, on: loop
        ) { [self] in
            evaluatePressure("charge above a line, footprint below it")
        }
    }
}
