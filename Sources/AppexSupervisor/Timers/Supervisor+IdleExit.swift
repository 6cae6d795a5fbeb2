import AppexCgroups
import AppexKillReason
import AppexWire

// Warm reuse and idle exit: an instance that has answered stays, idle, and serves the next
// request without a spawn. After the policy's `idleTimeout` with nothing to do it is told to
// terminate (`idle-exit`), and killed if it has not gone after the grace period.

extension Supervisor {
    /// The instance has nothing to do: give it a waiting request, or start its idle clock.
    func becameIdle(_ instance: ExtensionInstance) {
        let slot = slot(for: instance.identifier)
        pump(slot)
        guard instance.state == .idle, instance.ticket == nil, !instance.exiting,
            let entry = catalog[instance.identifier]
        else { return }
        enterIdleBands(instance)
        livenessOnIdle(instance)
        loop.cancel(instance.idleTimer)
        instance.idleTimer = loop.schedule(after: entry.lifecycle.idleTimeout) { [self] in
            instance.idleTimer = nil
            guard instance.state == .idle, instance.ticket == nil else { return }
            terminate(instance, reason: .idleExit, "idle for \(entry.lifecycle.idleTimeout.wholeMilliseconds) ms")
        }
    }

    /// Asks the instance to exit (Terminate with the grace period), then kills it when the
    /// grace runs out. The reason is recorded now: the exit is attributed to it.
    func terminate(_ instance: ExtensionInstance, reason: KillReason, _ message: String) {
        guard instance.isLive, instance.state != .terminating else { return }
        guard instance.state == .idle || instance.state == .busy else {
            kill(instance, reason: reason, message)
            return
        }
        instance.killReason = instance.killReason ?? reason
        instance.killMessage = instance.killMessage ?? message
        noteEndTrigger(instance)
        instance.state = .terminating
        loop.cancel(instance.idleTimer)
        loop.cancel(instance.pingTimer)
        loop.cancel(instance.pongTimer)
        instance.idleTimer = nil
        instance.pingTimer = nil
        instance.pongTimer = nil
        let grace = options.terminateGrace
        send(.terminate(Terminate(reason: Reason(reason), graceMilliseconds: UInt32(clamping: grace.wholeMilliseconds))), to: instance)
        instance.graceTimer = loop.schedule(after: grace) { [self] in
            instance.graceTimer = nil
            signalKill(instance)
        }
    }
}

extension Supervisor {
    /// Ends the idle instances of `identifier` now, as their idle timeout would (`idle-exit`),
    /// and returns once they are gone; busy ones are left alone. The extension's sandbox stays,
    /// so the next request is a cold launch into it: what the benchmark measures, and a way to
    /// give memory back without waiting for the timeout.
    public func endIdleInstances(of identifier: String) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            loop.post { [self] in
                guard let slot = slots[identifier] else {
                    c.resume()
                    return
                }
                let idle = slot.instances.filter { $0.state == .idle && $0.ticket == nil }
                for instance in idle { terminate(instance, reason: .idleExit, "idle, ended early") }
                let gone: (Supervisor) -> Bool = { _ in idle.allSatisfy { i in !slot.instances.contains { $0 === i } } }
                if gone(self) { c.resume() } else { exitWaiters.append(ExitWaiter(isDone: gone, resume: { c.resume() })) }
            }
        }
    }
}
