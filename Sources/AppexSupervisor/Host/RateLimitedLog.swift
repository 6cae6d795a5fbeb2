import Logging

/// A warning that a hostile peer can cause at will (a refused connection, a failed accept)
/// is logged at most `burst` times per `interval` for each key; the rest are counted and
/// reported in one line when the next interval opens. Otherwise a flood of connections
/// becomes a flood of log lines. Loop thread only.
struct RateLimitedLog {
    let interval: Duration
    let burst: Int
    private var windows: [String: Window] = [:]

    private struct Window {
        var start: ContinuousClock.Instant
        var logged = 0
        var suppressed = 0
    }

    init(interval: Duration = .seconds(10), burst: Int = 5) {
        self.interval = interval
        self.burst = burst
    }

    mutating func warning(
        _ logger: Logger, key: String, _ message: @autoclosure () -> String,
        now: ContinuousClock.Instant = .now
    ) {
        var window = windows[key] ?? Window(start: now)
        if now - window.start >= interval {
            if window.suppressed > 0 {
                logger.warning("\(key): \(window.suppressed) more like this in the last \(window.start.duration(to: now)) not logged")
            }
            window = Window(start: now)
        }
        if window.logged < burst {
            window.logged += 1
            logger.warning("\(message())")
        } else {
            window.suppressed += 1
        }
        windows[key] = window
        if windows.count > 1024 { windows = windows.filter { now - $0.value.start < interval } }
    }
}
