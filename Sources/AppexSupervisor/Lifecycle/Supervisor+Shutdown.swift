import AppexKillReason
import AppexWire
import Dispatch

/// Someone waiting (on the loop) until a condition on the supervisor's instances holds:
/// shutdown until none is left, uninstall until an extension's are gone.
final class ExitWaiter: @unchecked Sendable {
    let isDone: (Supervisor) -> Bool
    let resume: () -> Void

    init(isDone: @escaping (Supervisor) -> Bool, resume: @escaping () -> Void) {
        self.isDone = isDone
        self.resume = resume
    }
}

extension Supervisor {
    /// Stops the supervisor: no new requests; waiting ones fail with `shutdown`; every
    /// instance is told to terminate and killed after the grace period; then the sandboxes
    /// close, the cgroups go, and the loop stops. Returns when all of that is done.
    public func shutdown() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            loop.post { [self] in
                shuttingDown = true
                stopMemoryGovernor()
                stopTransferWorkers()
                for slot in slots.values {
                    for ticket in slot.queue { ticket.fail(.shutdown, "appexd is shutting down") }
                    slot.queue.removeAll()
                    for instance in slot.instances where instance.isLive {
                        terminate(instance, reason: .supervisorShutdown, "appexd is shutting down")
                    }
                }
                whenInstancesGone({ _ in true }) { c.resume() }
            }
        }
        // Sandboxes close on their launch queues, after any launch still under way there.
        let holders = await onLoop { s in s.slots.values.map { ($0.launchQueue, $0.sandbox) } }
        for (queue, holder) in holders { queue.sync { holder.close() } }
        try? cgroups.removeParent()
        parentClaim.release()
        flushHistory()
        loop.stop()
    }

    /// Calls `done` on the loop once no instance matching `filter` is left (at once if none).
    func whenInstancesGone(_ filter: @escaping (ExtensionSlot) -> Bool, _ done: @escaping () -> Void) {
        let isDone: (Supervisor) -> Bool = { s in
            s.slots.values.allSatisfy { !filter($0) || $0.instances.isEmpty }
        }
        if isDone(self) {
            done()
            return
        }
        exitWaiters.append(ExitWaiter(isDone: isDone, resume: done))
    }

    /// Ends the instances of `identifier` (terminate, then kill after the grace) and closes
    /// its sandbox; `done` runs on the loop when they are gone. For disable, uninstall and
    /// reinstall: the next request launches from what the registry now holds.
    func retire(_ identifier: String, reason: KillReason, _ message: String, done: @escaping @Sendable () -> Void) {
        guard let slot = slots[identifier] else {
            done()
            return
        }
        for instance in slot.instances where instance.isLive { terminate(instance, reason: reason, message) }
        whenInstancesGone({ $0 === slot }) { [self] in
            let holder = slot.sandbox
            slot.launchQueue.async { [self] in
                holder.close()
                loop.post { done() }
            }
        }
    }
}
