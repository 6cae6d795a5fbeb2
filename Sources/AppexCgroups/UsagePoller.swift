import CAppexLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// cgroup v2's usage thresholds: a one-shot timerfd the caller's event loop polls, and
/// `memory.current` kept open and read with pread at each expiry (`UsageLines` says when the
/// next comes and whether a line was crossed). The timer is armed at creation and re-armed by
/// every `tick`; the descriptor is `source.fd` (POLLIN), as a v1 threshold's eventfd is.
final class UsagePoller: Sendable {
    let source: EventSource
    let path: String
    private let current: Int32
    private let state: Mutex<(lines: UsageLines, armed: Duration)>

    /// Opens `memory.current` at `path`, takes the first reading (where the charge is now, no
    /// crossing) and arms the timer.
    init(path: String, lines: [Int64]) throws {
        self.path = path
        current = try Sys.open(path, O_RDONLY)
        do {
            source = try EventSource.timer(path: path)
        } catch {
            Sys.close(current)
            throw error
        }
        state = Mutex((UsageLines(lines), .zero))
        tick()  // the first reading reports no crossing
    }

    deinit { Sys.close(current) }

    var lines: [Int64] { state.withLock { $0.lines.lines } }
    /// How far ahead the timer was last armed (what the tests check the rule by).
    var armed: Duration { state.withLock { $0.armed } }

    enum Reading { case usage(Int64), unreadable, gone }

    /// The charge now: a pread of the open `memory.current`. `gone` once the cgroup is
    /// removed (the kernel fails the read); `unreadable` for text that is not a number yet
    /// (a fake tree's file being rewritten).
    func read() -> Reading {
        var buf = [UInt8](repeating: 0, count: 32)
        let n = buf.withUnsafeMutableBytes { pread(current, $0.baseAddress, $0.count, 0) }
        if n < 0 { return .gone }
        guard let v = try? CgroupParse.number(String(decoding: buf[0..<n], as: UTF8.self), path: path) else { return .unreadable }
        return .usage(v)
    }

    /// After the timer fired (or to look now): reads the charge, re-arms the timer for the
    /// next look and says whether the reading crossed a line. A cgroup that is gone is not
    /// looked at again.
    @discardableResult
    func tick() -> Bool {
        Sys.drain(source.fd)
        switch read() {
        case .gone:
            return false
        case .unreadable:
            arm(UsageLines.shortest)
            return false
        case .usage(let usage):
            let (crossed, next) = state.withLock { st in
                let crossed = st.lines.observe(usage)
                st.armed = st.lines.interval(after: usage)
                return (crossed, st.armed)
            }
            arm(next)
            return crossed
        }
    }

    /// A reading the caller took (and acts on) itself: where the charge is now, silently, and
    /// the next look timed from it. Without it a fall and a rise between two looks (a victim
    /// killed, then its neighbour growing) left the lines' count where it was, and the rise
    /// was never reported.
    func sync(_ usage: Int64) {
        let next = state.withLock { st in
            _ = st.lines.observe(usage)
            st.armed = st.lines.interval(after: usage)
            return st.armed
        }
        arm(next)
    }

    /// Other lines; the next look comes at once.
    func move(to lines: [Int64]) {
        state.withLock { st in
            st.lines.move(to: lines)
            st.armed = .nanoseconds(1)
        }
        arm(.nanoseconds(1))
    }

    private func arm(_ after: Duration) {
        _ = appex_timerfd_arm(source.fd, Int64(after.wholeNanoseconds))
    }
}
