import AppexCgroups
import AppexWire

// Liveness: every `pingInterval` appexd pings each checked-in instance, busy or idle; a pong
// must come within `unresponsiveTimeout`, or the instance is killed as `unresponsive`. A hung
// extension (a deadlock, an endless loop on the thread that reads its socket) is found this
// way, as iOS's watchdog finds one.

extension Supervisor {
    func startLiveness(_ instance: ExtensionInstance) {
        guard let entry = catalog[instance.identifier] else { return }
        let interval = entry.lifecycle.pingInterval
        let timeout = entry.lifecycle.unresponsiveTimeout
        instance.pingTimer = loop.schedule(after: interval) { [self] in
            ping(instance, interval: interval, timeout: timeout)
        }
    }

    private func ping(_ instance: ExtensionInstance, interval: Duration, timeout: Duration) {
        instance.pingTimer = nil
        guard instance.state == .idle || instance.state == .busy else { return }
        instance.pingSequence += 1
        let sequence = instance.pingSequence
        guard send(.ping(sequence: sequence), to: instance) else { return }
        instance.pongTimer = loop.schedule(after: timeout) { [self] in
            instance.pongTimer = nil
            kill(instance, reason: .unresponsive, "no pong within \(timeout.wholeMilliseconds) ms")
        }
        instance.pingTimer = loop.schedule(after: max(interval, timeout)) { [self] in
            ping(instance, interval: interval, timeout: timeout)
        }
    }

    func pongReceived(_ instance: ExtensionInstance, sequence: UInt64) {
        guard sequence == instance.pingSequence else { return }
        loop.cancel(instance.pongTimer)
        instance.pongTimer = nil
    }
}
