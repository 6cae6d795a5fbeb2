import AppexCgroups
import AppexPolicy
import AppexWire
import Dispatch
import Foundation

// Footprint limits and memory warnings, per instance (Docs/jetsam.md). Limits apply to the
// footprint (anonymous + shared + dirty memory, Docs/cgroups.md), not to the cgroup's charge,
// which also holds clean page cache. The policy gives an active pair (while the instance
// works for a request) and an inactive pair (idle), each a soft and a hard limit:
//   - hard: appexd kills the instance the moment its footprint reaches it, `per-process-limit`
//     (XNU's fatal limit). The cgroup's own limit, hard + page-cache allowance, stays as the
//     kernel's backstop.
//   - soft: a memory warning, and the instance becomes an early victim under memory pressure
//     (XNU's high-water mark).
// Every instance is warned at 80 % of its active hard limit, or at its soft limit when that is
// lower (iOS's didReceiveMemoryWarning): once per crossing of that line. Before an answer the
// footprint is read when the peak says it may be over a line, so an instance over its fatal
// limit never completes a request, whichever of the event and the answer the loop saw first.
//
// Event-driven: the kernel signals when the charge crosses each line, up or down (v1 usage
// thresholds on eventfds, watched by the loop). v2 has no usage thresholds: a timer on the loop
// reads memory.current, sooner the nearer the next line is, and only a crossing wakes the
// rest (ThresholdWatcher, UsageLines). The charge is never below
// the footprint; each threshold sits above its line by what the cgroup was charged beyond the
// footprint when it was registered (page cache, kernel memory), so that it fires as the
// footprint reaches the line. Only while the charge is above a threshold and the footprint is
// below its line (that extra part grew) can the footprint rise with no event; then it is read
// again after 100 ms (10 ms next to the fatal line), doubling to 1.6 s while the gap lasts: the
// one poll here, bounded to that window.

extension Supervisor {
    static let memoryWarningFraction = 0.8
    static let memoryRecheckFirst: Duration = .milliseconds(100)
    static let memoryRecheckNearFatal: Duration = .milliseconds(10)

    /// The lines that apply to an instance now.
    struct FootprintLines {
        /// Where the memory warning goes out: 80 % of the active hard limit, or the soft limit
        /// when that is lower (one warning per crossing of it).
        var warning: Int64
        var soft: Int64
        var hard: Int64
        var active: Bool
    }

    func footprintLines(_ instance: ExtensionInstance, _ memory: MemoryPolicy) -> FootprintLines {
        let active = instance.isActive
        let soft = active ? memory.activeSoftLimit.bytes : memory.inactiveSoftLimit.bytes
        let hard = active ? memory.activeHardLimit.bytes : memory.inactiveHardLimit.bytes
        let eighty = Self.eightyPercentLine(memory)
        let warning = soft > 0 ? min(eighty, soft) : eighty
        return FootprintLines(warning: warning, soft: soft, hard: hard, active: active)
    }

    /// Where every instance is warned at the latest: 80 % of the active hard limit.
    static func eightyPercentLine(_ memory: MemoryPolicy) -> Int64 {
        Int64(Double(memory.activeHardLimit.bytes) * memoryWarningFraction)
    }

    /// Every line either state may use: what the kernel is asked to watch.
    static func allLines(_ memory: MemoryPolicy) -> [Int64] {
        Array(
            Set(
                [
                    eightyPercentLine(memory), memory.activeSoftLimit.bytes, memory.activeHardLimit.bytes,
                    memory.inactiveSoftLimit.bytes, memory.inactiveHardLimit.bytes,
                ].filter { $0 > 0 })
        ).sorted()
    }

    /// Arms the limits of a freshly launched instance (no-op without a cgroup).
    ///
    /// Off the loop: registering a v1 usage threshold ends in the kernel's `synchronize_rcu`,
    /// an RCU grace period, which on the loop would hold up every instance's
    /// frames, this one's check-in first. Memory charged before the thresholds are in place is
    /// caught by the check that follows them, and by the check after each answer.
    func armFootprintLimits(_ instance: ExtensionInstance, _ memory: MemoryPolicy) {
        guard let cgroup = instance.run?.run.cgroup else { return }
        // Every line either state may use: v1 registers a usage threshold at each, v2's
        // watcher reads memory.current sooner the nearer the next one is.
        let lines = Self.allLines(memory)
        let label = instance.label
        workers.async { [self] in
            // What the cgroup is charged beyond the footprint (page cache, kernel memory) shifts
            // each threshold, so that the charge reaches it when the footprint reaches the line
            // while that part stays as it is; when it grows, the gap check below covers it.
            // One eventfd carries every line (registered in parallel, so their grace periods
            // overlap): one descriptor an instance, however many lines its policy has.
            let offset = max(0, ((try? cgroup.memoryCurrent()) ?? 0) - ((try? cgroup.footprint()) ?? 0))
            let made = Result { try cgroup.makeThresholdWatcher(lines: lines.map { $0 + offset }) }
            loop.post { [self] in
                if case .failure(let error) = made {
                    logger.warning("\(label): footprint limits watched only after answers: \(error)")
                }
                guard instance.isLive else { return }  // the watcher closes as it goes
                instance.memoryLineOffset = offset
                if case .success(let w) = made {
                    do {
                        try loop.register(w.fd) { [self] in
                            if w.acknowledge() { checkFootprint(instance) }
                        }
                        instance.memoryWatchers.append(w)
                    } catch {
                        logger.warning("\(label): cannot watch a footprint line: \(error)")
                    }
                }
                instance.memoryWatchersArmed = true
                checkFootprint(instance)
            }
        }
    }

    /// Whether the kernel now watches `identifier`'s instances' footprint lines (all of
    /// them, once their thresholds are registered). For tests and diagnostics.
    public func footprintLimitsArmed(of identifier: String) async -> Bool {
        await onLoop { s in
            let live = s.slots[identifier]?.liveInstances ?? []
            return !live.isEmpty && live.allSatisfy(\.memoryWatchersArmed)
        }
    }

    func disarmFootprintLimits(_ instance: ExtensionInstance) {
        for w in instance.memoryWatchers { loop.unregister(w.fd) }
        instance.memoryWatchers = []
        instance.memoryRecheck.cancel(loop)
    }

    /// What one look at an instance's cgroup read.
    struct FootprintReading {
        var footprint: Int64
        var charged: Int64
    }

    /// The reading an answer is judged by, taken once and used twice: before the answer goes
    /// out (the active limits: an instance over its fatal limit does not get to complete the
    /// request, whatever order the kernel's event and the answer reached the loop in) and
    /// after it (the instance idles: its inactive limits). nil when there is nothing to read:
    /// `peak`, the high-water mark the answer reads anyway, bounds the charge, and below every
    /// line neither check can find anything.
    func footprintForAnswer(_ instance: ExtensionInstance, peak: Int64?) -> FootprintReading? {
        guard let memory = catalog[instance.identifier]?.lifecycle.memory else { return nil }
        if let peak, let lowest = Self.allLines(memory).first, peak < lowest, !instance.overSoftLimit, !instance.memoryWarned {
            return nil
        }
        return readFootprint(instance)
    }

    /// Reads the footprint and acts on the lines that apply now.
    func checkFootprint(_ instance: ExtensionInstance) {
        if let reading = readFootprint(instance) { judgeFootprint(instance, reading) }
    }

    func readFootprint(_ instance: ExtensionInstance) -> FootprintReading? {
        guard let cgroup = instance.run?.run.cgroup,
            let footprint = try? cgroup.footprint(), let charged = try? cgroup.memoryCurrent()
        else { return nil }
        // v2: the next crossing is judged from this reading (see ThresholdWatcher.sync).
        for w in instance.memoryWatchers { w.sync(usage: charged) }
        return FootprintReading(footprint: footprint, charged: charged)
    }

    /// Acts on `reading` against the lines that apply now (the instance's state says which).
    func judgeFootprint(_ instance: ExtensionInstance, _ reading: FootprintReading) {
        guard instance.isLive, instance.state != .terminating, instance.killReason == nil,
            let memory = catalog[instance.identifier]?.lifecycle.memory
        else { return }
        let footprint = reading.footprint, charged = reading.charged
        let lines = footprintLines(instance, memory)
        let which = lines.active ? "active" : "inactive"
        if lines.hard > 0 && footprint >= lines.hard {
            kill(
                instance, reason: .perProcessLimit,
                "footprint \(Self.mib(footprint)) reached its \(which) limit of \(Self.mib(lines.hard))")
            return
        }
        let wasOver = instance.overSoftLimit
        instance.overSoftLimit = lines.soft > 0 && footprint >= lines.soft
        if instance.overSoftLimit && !wasOver {
            logger.info("\(instance.label): over its \(which) soft limit: footprint \(Self.mib(footprint)), limit \(Self.mib(lines.soft))")
        }
        let crossed = lines.warning > 0 && footprint >= lines.warning
        if crossed && !instance.memoryWarned {
            sendMemoryWarning(instance, "footprint \(Self.mib(footprint)) past \(Self.mib(lines.warning))")
        }
        instance.memoryWarned = crossed
        scheduleMemoryRecheck(instance, footprint: footprint, charged: charged, lines: [lines.warning, lines.soft, lines.hard])
    }

    /// Sends a MemoryWarning when the instance can take one.
    func sendMemoryWarning(_ instance: ExtensionInstance, _ why: String) {
        instance.memoryWarningsSent += 1
        measureMemoryWarning(instance)
        logger.info("\(instance.label): memory warning: \(why)")
        if instance.state == .idle || instance.state == .busy {
            send(.memoryWarning(MemoryWarning(level: .warning)), to: instance)
        }
    }

    /// While the charge is above a threshold and the footprint below its line, no event would
    /// tell of the footprint rising: look again (GapRecheck). Near the fatal line the first
    /// look comes sooner: the kill should land at the limit.
    private func scheduleMemoryRecheck(_ instance: ExtensionInstance, footprint: Int64, charged: Int64, lines: [Int64]) {
        let offset = instance.memoryLineOffset
        let inGap = { (line: Int64) in GapRecheck.inGap(line: line, offset: offset, charged: charged, footprint: footprint) }
        let nearFatal = lines.last.map(inGap) ?? false
        instance.memoryRecheck.update(
            gap: lines.contains(where: inGap),
            first: nearFatal ? Self.memoryRecheckNearFatal : Self.memoryRecheckFirst,
            on: loop
        ) { [self] in checkFootprint(instance) }
    }

    static func mib(_ bytes: Int64) -> String {
        let m = Double(bytes) / 1_048_576
        return m >= 10 ? "\(Int(m.rounded())) MiB" : "\((m * 10).rounded() / 10) MiB"
    }
}
