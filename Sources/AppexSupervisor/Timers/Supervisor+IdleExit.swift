import AppexCgroups
import AppexWire

// Warm reuse and idle exit: an instance that has answered stays, idle, and serves the next
// request without a spawn. After the policy's `idleTimeout` with nothing to do it is told to
// terminate (`idle-exit`), and killed if it has not gone after the grace period.

extension Supervisor {
    /// The instance has nothing to do: give it a waiting request, or start its idle clock.
    func becameIdle(_ instance: ExtensionInstance) {
        let slot = slot(for: instance.identifier)
        pump(slot)
        guard instance.state == .idle, instance.ticket == nil, let entry = catalog[instance.identifier] else { return }
        loop.cancel(instance.idleTimer)
        instance.idleTimer = loop.schedule(after: entry.lifecycle.idleTimeout) { [self] in
            instance.idleTimer = nil
            guard instance.state == .idle, instance.ticket == nil else { return }
            terminate(instance, reason: .idleExit, "idle for \(entry.lifecycle.idleTimeout.wholeMilliseconds) ms")
        }
    }

    /// Asks the instance to exit (Terminate with the grace period), then kills it when the
    /// grace runs out. The reason is recorded now: the exit is attributed to it.
    func terminate(_ instance: ExtensionInstance, reason: Reason, _ message: String) {
        guard instance.isLive, instance.state != .terminating else { return }
        guard instance.state == .idle || instance.state == .busy else {
            kill(instance, reason: reason, message)
            return
        }
        instance.killReason = instance.killReason ?? reason
        instance.killMessage = instance.killMessage ?? message
        instance.state = .terminating
        loop.cancel(instance.idleTimer)
        loop.cancel(instance.pingTimer)
        loop.cancel(instance.pongTimer)
        instance.idleTimer = nil; instance.pingTimer = nil; instance.pongTimer = nil
        let grace = options.terminateGrace
        send(.terminate(Terminate(reason: reason, graceMilliseconds: UInt32(clamping: grace.wholeMilliseconds))), to: instance)
        instance.graceTimer = loop.schedule(after: grace) { [self] in
            instance.graceTimer = nil
            signalKill(instance)
        }
    }
}
