import AppexCgroups
import AppexPolicy
import AppexWire

// Liveness: appexd pings each checked-in instance, and each ping's pong must come within
// `unresponsiveTimeout`, or the instance is killed as `unresponsive`. A hung extension (a
// deadlock, an endless loop on the thread that reads its socket) is found this way, as iOS's
// watchdog finds one. A busy instance is pinged every `pingInterval`, whatever is still
// unanswered: several pings may be out at once, each with its own deadline, so a hang is
// found within `pingInterval + unresponsiveTimeout` of its start. An idle one is pinged every
// `idlePingInterval` (30 s shipped): its hang harms nothing until a request comes, and the
// request brings its next ping back within `pingInterval` (`livenessOnDispatch`).

extension Supervisor {
    func startLiveness(_ instance: ExtensionInstance) {
        schedulePing(instance)
    }

    /// Between pings while busy and while idle (never more often than `pingInterval`).
    private static func pingIntervals(_ lifecycle: ExtensionPointPolicy) -> (busy: Duration, idle: Duration) {
        (lifecycle.pingInterval, max(lifecycle.idlePingInterval, lifecycle.pingInterval))
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
        instance.unansweredPings.append((sequence, MonotonicTime.now))
        if instance.pongTimer == nil { armPongDeadline(instance, timeout: timeout) }
        schedulePing(instance)
    }

    /// The oldest unanswered ping's deadline: past it, the instance is unresponsive.
    private func armPongDeadline(_ instance: ExtensionInstance, timeout: Duration) {
        loop.cancel(instance.pongTimer)
        instance.pongTimer = nil
        guard let oldest = instance.unansweredPings.first, timeout > .zero else { return }
        let deadline = oldest.sentAt + timeout.wholeNanoseconds
        let now = MonotonicTime.now
        instance.pongTimer = loop.schedule(after: .nanoseconds(Int64(deadline > now ? deadline - now : 0))) { [self] in
            instance.pongTimer = nil
            kill(instance, reason: .unresponsive, "no pong within \(timeout.wholeMilliseconds) ms")
        }
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

    /// A pong answers its ping and every earlier one (the extension answers in order).
    func pongReceived(_ instance: ExtensionInstance, sequence: UInt64) {
        guard instance.unansweredPings.contains(where: { $0.sequence == sequence }) else { return }
        instance.unansweredPings.removeAll { $0.sequence <= sequence }
        armPongDeadline(instance, timeout: catalog[instance.identifier]?.lifecycle.unresponsiveTimeout ?? .zero)
    }
}
