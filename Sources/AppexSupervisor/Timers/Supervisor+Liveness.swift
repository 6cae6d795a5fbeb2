import AppexCgroups
import AppexPolicy
import AppexWire

// Liveness: appexd pings each checked-in instance, and a pong must come within
// `unresponsiveTimeout`, or the instance is killed as `unresponsive`. A hung extension (a
// deadlock, an endless loop on the thread that reads its socket) is found this way, as iOS's
// watchdog finds one. A busy instance is pinged every `pingInterval` (or `unresponsiveTimeout`
// when longer: one ping outstanding at a time); an idle one every `idlePingInterval` (30 s
// shipped): its hang harms nothing until a request comes, and the request brings its next
// ping back within `pingInterval` (`livenessOnDispatch`).

extension Supervisor {
    func startLiveness(_ instance: ExtensionInstance) {
        schedulePing(instance)
    }

    /// Between pings while busy and while idle: never sooner than the last pong may still come.
    private static func pingIntervals(_ lifecycle: ExtensionPointPolicy) -> (busy: Duration, idle: Duration) {
        let busy = max(lifecycle.pingInterval, lifecycle.unresponsiveTimeout)
        return (busy, max(lifecycle.idlePingInterval, busy))
    }

    /// The next ping, `pingInterval` or `idlePingInterval` away by the instance's state.
    private func schedulePing(_ instance: ExtensionInstance) {
        guard let lifecycle = catalog[instance.identifier]?.lifecycle else { return }
        let intervals = Self.pingIntervals(lifecycle)
        let interval = instance.state == .idle ? intervals.idle : intervals.busy
        loop.cancel(instance.pingTimer)
        instance.pingDue = MonotonicTime.now + interval.wholeNanoseconds
        instance.pingTimer = loop.schedule(after: interval) { [self] in
            ping(instance, timeout: lifecycle.unresponsiveTimeout)
        }
    }

    private func ping(_ instance: ExtensionInstance, timeout: Duration) {
        instance.pingTimer = nil
        guard instance.state == .idle || instance.state == .busy else { return }
        instance.pingSequence += 1
        let sequence = instance.pingSequence
        guard send(.ping(sequence: sequence), to: instance) else { return }
        instance.pongTimer = loop.schedule(after: timeout) { [self] in
            instance.pongTimer = nil
            kill(instance, reason: .unresponsive, "no pong within \(timeout.wholeMilliseconds) ms")
        }
        schedulePing(instance)
    }

    /// A request went to `instance`: an idle instance's next ping may be far off; bring it
    /// within `pingInterval`, so a hang while serving is found as soon as it would be in a busy one.
    func livenessOnDispatch(_ instance: ExtensionInstance) {
        guard instance.pingTimer != nil, let lifecycle = catalog[instance.identifier]?.lifecycle else { return }
        if instance.pingDue > MonotonicTime.now + Self.pingIntervals(lifecycle).busy.wholeNanoseconds { schedulePing(instance) }
    }

    /// The instance answered and idles: it was alive a moment ago, so its next ping moves
    /// out to the idle interval (a pong still due stays due).
    func livenessOnIdle(_ instance: ExtensionInstance) {
        if instance.pingTimer != nil { schedulePing(instance) }
    }

    func pongReceived(_ instance: ExtensionInstance, sequence: UInt64) {
        guard sequence == instance.pingSequence else { return }
        loop.cancel(instance.pongTimer)
        instance.pongTimer = nil
    }
}
