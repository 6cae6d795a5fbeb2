import AppexCgroups
import Dispatch
import AppexWire

// Memory warnings, the counterpart of iOS's didReceiveMemoryWarning: an instance is told when
// its footprint (anonymous + shared + dirty memory, Docs/cgroups.md) reaches 80 % of its
// policy's active limit, once per crossing; it may then give memory back before anything
// worse happens to it.
//
// Event-driven: the kernel signals when the cgroup's charged memory crosses the same 80 %
// (a v1 usage threshold on an eventfd; memory.events on v2), which the loop watches beside
// the instance's pidfd and channel. The threshold is registered off the loop (see
// armMemoryWarning). The charge also counts clean page cache, so it can cross
// while the footprint has not; then no further event would come while the charge stays above,
// and the footprint is checked again every 100 ms until either drops below the line: the one
// poll here, bounded to that window.

extension Supervisor {
    static let memoryWarningFraction = 0.8
    static let memoryRecheckInterval: Duration = .milliseconds(100)

    /// Arms the warning for a freshly launched instance (no-op without a cgroup or a limit).
    ///
    /// Off the loop: registering a v1 usage threshold ends in the kernel's `synchronize_rcu`,
    /// an RCU grace period (~10 ms) that on the loop would hold up every instance's frames,
    /// this one's check-in first. Memory charged before the threshold is in place is caught by
    /// the check that follows it, and by the check before each answer.
    func armMemoryWarning(_ instance: ExtensionInstance, activeLimit: Int64) {
        guard activeLimit > 0, let cgroup = instance.run?.run.cgroup else { return }
        let line = Int64(Double(activeLimit) * Self.memoryWarningFraction)
        instance.memoryWarningLine = line
        let label = instance.label
        DispatchQueue.global().async { [self] in
            let made = Result { try cgroup.makeThresholdWatcher(bytes: line) }
            loop.post { [self] in
                switch made {
                case .success(let watcher):
                    guard instance.isLive else { return }  // the watcher closes as it goes
                    do {
                        try loop.register(watcher.fd) { [self] in memoryEvent(instance) }
                        instance.memoryWatcher = watcher
                        checkFootprint(instance)
                    } catch {
                        logger.warning("\(label): no memory warnings: \(error)")
                    }
                case .failure(let error):
                    logger.warning("\(label): no memory warnings: \(error)")
                }
            }
        }
    }

    func disarmMemoryWarning(_ instance: ExtensionInstance) {
        if let watcher = instance.memoryWatcher {
            loop.unregister(watcher.fd)
            instance.memoryWatcher = nil
        }
        loop.cancel(instance.memoryRecheckTimer)
        instance.memoryRecheckTimer = nil
    }

    private func memoryEvent(_ instance: ExtensionInstance) {
        instance.memoryWatcher?.acknowledge()
        checkFootprint(instance)
    }

    /// Before an answer goes to the host: a warning the extension has earned is sent now, so
    /// it reaches the extension before the host's next request does (the kernel's event may
    /// have come while the footprint still lagged the charge). `peak`, the cgroup's
    /// high-water mark the answer reads anyway, bounds the charge: below the line, nothing to
    /// read; above it, the footprint decides.
    func checkMemoryBeforeAnswer(_ instance: ExtensionInstance, peak: Int64?) {
        guard let line = instance.memoryWarningLine, !instance.memoryWarned, let peak, peak >= line else { return }
        checkFootprint(instance)
    }

    private func checkFootprint(_ instance: ExtensionInstance) {
        guard instance.isLive, let cgroup = instance.run?.run.cgroup, let line = instance.memoryWarningLine else { return }
        guard let footprint = try? cgroup.footprint(), let charged = try? cgroup.memoryCurrent() else { return }
        if footprint >= line {
            if !instance.memoryWarned {
                instance.memoryWarned = true
                instance.memoryWarningsSent += 1
                measureMemoryWarning(instance)
                logger.info("\(instance.label): memory warning: footprint \(footprint / 1024) KiB, line \(line / 1024) KiB")
                if instance.state == .idle || instance.state == .busy {
                    send(.memoryWarning(MemoryWarning(level: .warning)), to: instance)
                }
            }
        } else {
            // Below the line again: the next crossing warns again.
            instance.memoryWarned = false
        }
        // The charge above the line but the footprint not (page cache): no event will come
        // until the charge falls, so look again shortly, for as long as that lasts.
        loop.cancel(instance.memoryRecheckTimer)
        instance.memoryRecheckTimer = nil
        if charged >= line && footprint < line {
            instance.memoryRecheckTimer = loop.schedule(after: Self.memoryRecheckInterval) { [self] in
                instance.memoryRecheckTimer = nil
                checkFootprint(instance)
            }
        }
    }
}
