import AppexDaemon
import AppexSupervisor

#if canImport(Glibc)
import Glibc
#endif

/// systemd's watchdog (`WatchdogSec=` in appexd.service): when the service manager sets
/// `WATCHDOG_USEC` (and `WATCHDOG_PID` names this process, or is unset), appexd sends
/// `WATCHDOG=1` every half of that interval.
///
/// The ping is a timer on the supervisor's event loop, not a thread of its own: a ping then
/// proves the loop still turns, so a wedged loop (the thing that serves every request) stops
/// the pings and systemd restarts appexd.
enum SystemdWatchdog {
    /// Half of `WATCHDOG_USEC`, or nil when no watchdog is asked for.
    static func interval(usec: String?, pid: String?, ownPID: Int32 = getpid()) -> Duration? {
        guard let usec, let micros = Int64(usec), micros > 0 else { return nil }
        if let pid, !pid.isEmpty, Int32(pid) != ownPID { return nil }
        return .microseconds(micros / 2)
    }

    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// Starts pinging from `loop` when systemd asked for it; returns the interval used.
    @discardableResult
    static func start(on loop: EventLoop) -> Duration? {
        guard let every = interval(usec: environment("WATCHDOG_USEC"), pid: environment("WATCHDOG_PID")) else { return nil }
        loop.post { arm(loop, every) }
        return every
    }

    /// On the loop: one ping now, and the next one `every` from now.
    private static func arm(_ loop: EventLoop, _ every: Duration) {
        _ = try? SDNotify.notify("WATCHDOG=1")
        loop.schedule(after: every) { arm(loop, every) }
    }
}
