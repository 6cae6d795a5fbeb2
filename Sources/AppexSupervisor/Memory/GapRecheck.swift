#if canImport(Glibc)
import Glibc
#endif

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

    /// Whether a line is in the gap: the charge has reached it and the footprint has not.
    /// "Reached" allows `slack`: the kernel checks its thresholds against a charge that
    /// includes what each CPU holds precharged, and hands that back when it drains the
    /// per-CPU stock, so right after a threshold event memory.usage_in_bytes may read a
    /// little under the very line that fired. Taken strictly, no look followed, and with no
    /// line above it no event either: the level stayed at warning while the footprint went
    /// past the critical line (JetsamTests' ladder, on a loaded machine).
    /// `offset`: what the charge carries beyond the footprint (an instance's cache), so its
    /// threshold sits at `line + offset`.
    static func inGap(line: Int64, offset: Int64 = 0, charged: Int64, footprint: Int64, slack: Int64 = chargeSlack) -> Bool {
        line > 0 && charged + slack >= line + offset && footprint < line
    }

    /// What the CPUs may hold precharged: the kernel's MEMCG_CHARGE_BATCH (64 pages) each.
    static let chargeSlack: Int64 = {
        let pages = Int64(64), pageSize = Int64(sysconf(Int32(_SC_PAGESIZE)))
        let cpus = Int64(max(1, sysconf(Int32(_SC_NPROCESSORS_CONF))))
        return pages * pageSize * cpus
    }()
}
