/// The one bounded poll of the memory code: while the cgroup's charge is above a line and the
/// footprint below it, no kernel event would tell of the footprint rising, so it is read again
/// after `first`, doubling up to 1.6 s while the gap lasts; a shorter `first` asked for while a
/// later look is due brings it forward. Loop thread only.
final class GapRecheck: @unchecked Sendable {
    static let longest: Duration = .milliseconds(1600)
    private var timer: EventLoop.TimerID?
    private var delay: Duration = .zero
    /// The `first` this backoff started from.
    private var started: Duration = .zero

    /// `gap`: whether the charge/footprint gap exists now. Schedules `look` when it does and
    /// nothing is scheduled yet; forgets the backoff when it does not.
    func update(gap: Bool, first: Duration, on loop: EventLoop, _ look: @escaping () -> Void) {
        guard gap else {
            cancel(loop)
            delay = .zero
            started = .zero
            return
        }
        // The gap reached a line that wants its first look sooner than the one this backoff
        // started from: start again from that.
        if first < started {
            cancel(loop)
            delay = .zero
        }
        guard timer == nil else { return }
        if delay == .zero { started = first }
        delay = delay == .zero ? first : min(delay * 2, Self.longest)
        timer = loop.schedule(after: delay) { [self] in
            timer = nil
            look()
        }
    }

    func cancel(_ loop: EventLoop) {
        loop.cancel(timer)
        timer = nil
    }
}
