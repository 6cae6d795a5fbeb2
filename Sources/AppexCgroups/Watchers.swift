import CAppexLinux
import Dispatch
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A pollable kernel notification, and a private eventfd that wakes blocked waiters on cancel.
/// Descriptors live as long as the object: closing one under a thread blocked in poll(2)
/// could let the number be reused, so `cancel()` only wakes, and deinit closes. The cancel
/// eventfd is made by the first blocking `wait`: a source only the supervisor's epoll set
/// watches (one per live extension) never needs it, and a descriptor apiece adds up.
final class EventSource: Sendable {
    enum Kind: Sendable {
        /// v1: eventfd registered through cgroup.event_control. Also fires when the cgroup is removed.
        case v1Event
        /// v2 (and fake trees): inotify IN_MODIFY on a file such as memory.events.
        case inotify
        /// PSI trigger: POLLPRI on a /proc/pressure or memory.pressure file.
        case psi
        /// v2 usage lines: a one-shot timerfd (`UsagePoller`); `path` is what it reads.
        case timer
    }

    let kind: Kind
    let fd: Int32
    let path: String
    /// Cancelled yet, and the waiters' wake-up eventfd (-1 until a wait makes it).
    private let cancelState = Mutex((cancelled: false, fd: Int32(-1)))

    private init(kind: Kind, fd: Int32, path: String) {
        self.kind = kind
        self.fd = fd
        self.path = path
    }

    deinit {
        Sys.close(fd)
        let c = cancelState.withLock { $0.fd }
        if c >= 0 { Sys.close(c) }
    }

    /// v1 `cgroup.event_control`: "<eventfd> <fd of control file> [argument]".
    static func v1Event(dir: String, control: String, argument: String?) throws -> EventSource {
        try v1Events(dir: dir, control: control, arguments: [argument])
    }

    /// Several v1 registrations on one eventfd (e.g. one usage threshold per line): the kernel
    /// signals the same descriptor for each, and the reader re-reads what it watches. The
    /// writes run in parallel: each registration of a usage threshold ends in an RCU grace
    /// period, and concurrent ones share it. All or nothing: closing the eventfd on
    /// failure drops the registrations already made.
    static func v1Events(dir: String, control: String, arguments: [String?]) throws -> EventSource {
        let efd = try Sys.eventfd()
        let failure = Mutex<Error?>(nil)
        let register: @Sendable (String?) -> Void = { argument in
            do {
                let cfd = try Sys.open(dir + "/" + control, O_RDONLY)
                defer { Sys.close(cfd) }
                let ecfd = try Sys.open(dir + "/cgroup.event_control", O_WRONLY)
                defer { Sys.close(ecfd) }
                // The kernel keeps its own references; both descriptors can go once registered.
                var line = "\(efd) \(cfd)"
                if let argument { line += " \(argument)" }
                try Sys.writeCommand(ecfd, line, path: dir + "/cgroup.event_control")
            } catch {
                failure.withLock { if $0 == nil { $0 = error } }
            }
        }
        if arguments.count == 1 {
            register(arguments[0])
        } else {
            DispatchQueue.concurrentPerform(iterations: arguments.count) { register(arguments[$0]) }
        }
        if let error = failure.withLock({ $0 }) {
            Sys.close(efd)
            throw error
        }
        return EventSource(kind: .v1Event, fd: efd, path: dir + "/" + control)
    }

    static func inotify(_ path: String) throws -> EventSource {
        let ifd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        if ifd < 0 { throw Sys.fail("inotify_init1", path) }
        if inotify_add_watch(ifd, path, UInt32(IN_MODIFY | IN_DELETE_SELF)) < 0 {
            let e = Sys.errno
            Sys.close(ifd)
            throw Sys.fail("inotify_add_watch", path, e)
        }
        return EventSource(kind: .inotify, fd: ifd, path: path)
    }

    static func timer(path: String) throws -> EventSource {
        let tfd = appex_timerfd()
        if tfd < 0 { throw Sys.fail("timerfd_create for", path) }
        return EventSource(kind: .timer, fd: tfd, path: path)
    }

    static func psi(_ path: String, trigger: String) throws -> EventSource {
        let pfd = try Sys.open(path, O_RDWR | O_NONBLOCK)
        do {
            // The trigger lives as long as this descriptor.
            try Sys.writeCommand(pfd, trigger, path: path)
            return EventSource(kind: .psi, fd: pfd, path: path)
        } catch {
            Sys.close(pfd)
            throw error
        }
    }

    var isCancelled: Bool { cancelState.withLock { $0.cancelled } }

    func cancel() {
        cancelState.withLock { st in
            st.cancelled = true
            var one: UInt64 = 1
            if st.fd >= 0 { _ = Glibc.write(st.fd, &one, 8) }
        }
    }

    /// The wake-up eventfd, made on first use; nil once cancelled.
    private func cancelFD() throws -> Int32? {
        try cancelState.withLock { st in
            if st.cancelled { return nil }
            if st.fd < 0 { st.fd = try Sys.eventfd() }
            return st.fd
        }
    }

    enum Wake { case event, timeout, cancelled, gone }

    /// Blocks until the source fires, the deadline passes or someone cancels.
    func wait(deadline: UInt64?) throws -> Wake {
        guard let cancelFD = try cancelFD() else { return .cancelled }
        let events = Int16(kind == .psi ? POLLPRI : POLLIN)
        var timeoutMs: Int32 = -1
        if let deadline {
            let now = MonotonicTime.now
            timeoutMs = now >= deadline ? 0 : Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
        }
        let r = try Sys.poll([(fd, events), (cancelFD, Int16(POLLIN))], timeoutMs: timeoutMs)
        if r[1] != 0 || isCancelled { return .cancelled }
        if r[0] == 0 { return .timeout }
        if kind == .psi {
            // POLLERR: the monitored cgroup went away.
            return (r[0] & Int16(POLLPRI)) != 0 ? .event : .gone
        }
        Sys.drain(fd)
        return .event
    }
}

/// Converts an optional Duration to an absolute CLOCK_MONOTONIC deadline.
func deadline(after timeout: Duration?) -> UInt64? {
    guard let timeout else { return nil }
    return MonotonicTime.now + timeout.wholeNanoseconds
}

/// Runs a blocking wait off the cooperative pool; task cancellation cancels the watcher.
func blockingAsync<T: Sendable>(
    cancel: @escaping @Sendable () -> Void,
    _ body: @escaping @Sendable () throws -> T
) async throws -> T {
    try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, Error>) in
            DispatchQueue.global().async { c.resume(with: Result { try body() }) }
        }
    } onCancel: {
        cancel()
    }
}

/// Reports kernel OOM kills in one cgroup.
///
/// `fd` becomes readable (POLLIN) when something may have happened; a supervisor puts it in
/// its own epoll set and then calls `check()`. `wait(timeout:)` and `next()` are
/// conveniences for code without an event loop.
public final class OOMWatcher: Sendable {
    public let cgroup: ExtensionCgroup
    /// The cgroup's oom_kill count when the watcher was made: kills are counted from it.
    public let baseline: Int
    let source: EventSource
    private let lastCount: Mutex<Int>

    init(cgroup: ExtensionCgroup, source: EventSource, baseline: Int) {
        self.cgroup = cgroup
        self.baseline = baseline
        self.source = source
        lastCount = Mutex(baseline)
    }

    /// Pollable descriptor (POLLIN). Owned by the watcher: do not close it.
    public var fd: Int32 { source.fd }

    /// The OOM-kill count seen when the watcher was made or last reported.
    public var reportedCount: Int { lastCount.withLock { $0 } }

    /// Non-blocking: the new cumulative `oom_kill` count if it grew since the last report,
    /// nil otherwise (also nil when the cgroup is gone).
    public func check() throws -> Int? {
        Sys.drain(source.fd)
        let now: Int
        do {
            now = try cgroup.oomKillCount()
        } catch let e as CgroupError where e.errno == .noSuchFileOrDirectory || e.errno == .noSuchProcess {
            return nil
        } catch let e as CgroupError where e.errno == nil {
            // A half-written file (only possible in fake trees; cgroupfs reads are atomic).
            return nil
        }
        return lastCount.withLock { last in
            guard now > last else { return nil }
            last = now
            return now
        }
    }

    /// Blocks until the cgroup's OOM-kill count grows (returns it), or returns nil on timeout,
    /// cancellation, or removal of the cgroup. Other memory events wake it and are ignored.
    public func wait(timeout: Duration? = nil) throws -> Int? {
        let end = deadline(after: timeout)
        while true {
            if let n = try check() { return n }
            if !cgroup.exists { return nil }
            switch try source.wait(deadline: end) {
            case .event: continue
            case .timeout, .cancelled, .gone: return try check()
            }
        }
    }

    /// Async form of `wait()`; cancelling the task cancels the watcher.
    public func next(timeout: Duration? = nil) async throws -> Int? {
        try await blockingAsync(cancel: { [source] in source.cancel() }) { [self] in try wait(timeout: timeout) }
    }

    /// Wakes every waiter; later waits return nil at once.
    public func cancel() { source.cancel() }
}

/// Fires when a cgroup's charge crosses a line (Appex's footprint lines, the budget's ladder).
/// v1: usage thresholds on an eventfd, signalled by the kernel. v2 has none: a timerfd whose
/// every expiry reads `memory.current` (`UsagePoller`, `UsageLines`), sooner the nearer the
/// next line is; it reports only readings that crossed a line.
public final class ThresholdWatcher: Sendable {
    public let cgroup: ExtensionCgroup
    /// The lowest line.
    public let bytes: Int64
    let source: EventSource
    /// v2: what reads the charge at each expiry of `source`.
    let poller: UsagePoller?

    init(cgroup: ExtensionCgroup, source: EventSource, bytes: Int64, poller: UsagePoller? = nil) {
        self.cgroup = cgroup
        self.bytes = bytes
        self.source = source
        self.poller = poller
    }

    /// Pollable descriptor (POLLIN). Owned by the watcher.
    public var fd: Int32 { source.fd }

    /// The lines watched on v2 (moved by `move(to:)`); v1's are fixed at registration and not
    /// kept: nil there.
    public var lines: [Int64]? { poller?.lines }

    /// Blocks until usage is at or above `bytes` after a notification (returns the usage),
    /// or nil on timeout, cancellation or removal. Returns at once if usage is already above.
    ///
    /// The kernel checks v1 thresholds only on some charges (every 128 page events per CPU,
    /// and never on kernel-memory charges such as pipe buffers), so a crossing can go
    /// unsignalled for as long as the cgroup then stops charging; seen under load in the live
    /// tests (usage 17 MB, threshold 8 MiB, no event in 90 s). So the wait also reads usage
    /// again after `recheck` without an event: a bounded poll, the one safety net.
    public func wait(timeout: Duration? = nil, recheck: Duration = .seconds(1)) throws -> Int64? {
        let end = deadline(after: timeout)
        while true {
            let usage: Int64
            do {
                usage = try cgroup.memoryCurrent()
            } catch let e as CgroupError where e.errno == .noSuchFileOrDirectory {
                return nil
            }
            if usage >= bytes { return usage }
            if !cgroup.exists { return nil }
            let now = MonotonicTime.now
            if let end, now >= end { return nil }
            let next = now + recheck.wholeNanoseconds
            switch try source.wait(deadline: end.map { min($0, next) } ?? next) {
            case .event:
                poller?.tick()  // v2: the timer fired; it is armed again for the next look
            case .timeout: continue
            case .cancelled, .gone: return nil
            }
        }
    }

    public func next(timeout: Duration? = nil) async throws -> Int64? {
        try await blockingAsync(cancel: { [source] in source.cancel() }) { [self] in try wait(timeout: timeout) }
    }

    public func cancel() { source.cancel() }

    /// For a caller that polls `fd` itself (the supervisor's event loop), when it is readable:
    /// consumes the notification and says whether the charge may have crossed a line. v1: the
    /// kernel signalled a crossing, always true. v2: the timer fired; the charge is read, the
    /// timer armed for the next look, and only a crossing says true.
    @discardableResult
    public func acknowledge() -> Bool {
        guard let poller else {
            Sys.drain(source.fd)
            return true
        }
        return poller.tick()
    }

    /// v2: `usage` is a charge the caller read and acts on itself: the next crossing is
    /// judged from it, and the next look timed from it. The kernel tracks v1 thresholds
    /// itself: nothing to do there.
    public func sync(usage: Int64) {
        poller?.sync(usage)
    }

    /// v2: watches `lines` from now on, looking at once; where the charge is now is judged
    /// against them silently. v1 thresholds are fixed at registration: a new watcher moves
    /// them (false here).
    @discardableResult
    public func move(to lines: [Int64]) -> Bool {
        guard let poller else { return false }
        poller.move(to: lines)
        return true
    }
}

/// Memory pressure from PSI: a trigger on `/proc/pressure/memory` (system) or a v2
/// cgroup's `memory.pressure`, e.g. "some 150000 1000000" = tasks stalled on memory for
/// 150 ms within any 1 s window. Event-driven: the kernel wakes the poller (POLLPRI).
public final class MemoryPressureMonitor: Sendable {
    public enum Kind: String, Sendable { case some, full }

    public let path: String
    public let kind: Kind
    public let stall: Duration
    public let window: Duration
    let source: EventSource

    /// `stall` within `window` on one PSI file. The kernel wants a window of 500 ms…10 s and,
    /// without CAP_SYS_RESOURCE, a window that is a multiple of 2 s (EINVAL otherwise).
    public init(
        path: String, kind: Kind = .some,
        stall: Duration = .milliseconds(150), window: Duration = .seconds(1)
    ) throws {
        self.path = path
        self.kind = kind
        self.stall = stall
        self.window = window
        source = try EventSource.psi(path, trigger: Self.trigger(kind, stall, window))
    }

    static func micros(_ d: Duration) -> Int64 {
        d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
    }

    static func trigger(_ kind: Kind, _ stall: Duration, _ window: Duration) -> String {
        "\(kind.rawValue) \(micros(stall)) \(micros(window))"
    }

    /// System-wide memory pressure. Tries `/proc/pressure/memory`, then the root cgroup's
    /// `memory.pressure` on the cgroup2 mount (the same system-wide numbers); on EINVAL it
    /// retries with the window rounded up to the unprivileged 2 s granularity. `window`
    /// of the result tells which window the kernel accepted.
    public static func system(
        kind: Kind = .some, stall: Duration = .milliseconds(150),
        window: Duration = .seconds(1)
    ) throws -> MemoryPressureMonitor {
        var paths = ["/proc/pressure/memory"]
        if let unified = try? CgroupManager.probe().unifiedMount { paths.append(unified + "/memory.pressure") }
        return try firstAccepted(paths: paths, kind: kind, stall: stall, window: window)
    }

    /// The first PSI file of `paths` that takes the trigger, with `window` as given, then
    /// rounded up to a multiple of 2 s (what the kernel asks of a process without
    /// CAP_SYS_RESOURCE). The last error when none does.
    static func firstAccepted(paths: [String], kind: Kind, stall: Duration, window: Duration) throws -> MemoryPressureMonitor {
        let seconds = (micros(window) + 1_999_999) / 2_000_000 * 2
        let windows = micros(window) % 2_000_000 == 0 ? [window] : [window, .seconds(seconds)]
        var lastError: Error = CgroupError("arm PSI trigger", path: paths.joined(separator: ", "), errno: .invalidArgument)
        for w in windows {
            for p in paths {
                do {
                    return try MemoryPressureMonitor(path: p, kind: kind, stall: stall, window: w)
                } catch {
                    lastError = error
                }
            }
        }
        throw lastError
    }

    /// Pollable descriptor: POLLPRI when the trigger fires, POLLERR when the cgroup is gone.
    public var fd: Int32 { source.fd }

    /// Blocks until the trigger fires (true) or timeout/cancel (false). Throws when the
    /// monitored cgroup went away.
    public func wait(timeout: Duration? = nil) throws -> Bool {
        switch try source.wait(deadline: deadline(after: timeout)) {
        case .event: return true
        case .timeout, .cancelled: return false
        case .gone: throw CgroupError("wait for pressure on", path: path, errno: .noSuchFileOrDirectory)
        }
    }

    public func next(timeout: Duration? = nil) async throws -> Bool {
        try await blockingAsync(cancel: { [source] in source.cancel() }) { [self] in try wait(timeout: timeout) }
    }

    public func cancel() { source.cancel() }

    /// Current averages, e.g. `some avg10=0.00 avg60=0.00 avg300=0.00 total=0`.
    public static func read(path: String = "/proc/pressure/memory") throws -> [Kind: PressureAverages] {
        try parse(try Sys.readFile(path))
    }

    public static func parse(_ text: String) throws -> [Kind: PressureAverages] {
        var out: [Kind: PressureAverages] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard let first = parts.first, let kind = Kind(rawValue: String(first)) else { continue }
            var a = PressureAverages()
            for p in parts.dropFirst() {
                let kv = p.split(separator: "=", maxSplits: 1)
                guard kv.count == 2 else { continue }
                switch kv[0] {
                case "avg10": a.avg10 = Double(kv[1]) ?? 0
                case "avg60": a.avg60 = Double(kv[1]) ?? 0
                case "avg300": a.avg300 = Double(kv[1]) ?? 0
                case "total": a.totalMicroseconds = UInt64(kv[1]) ?? 0
                default: break
                }
            }
            out[kind] = a
        }
        return out
    }
}

public struct PressureAverages: Sendable, Equatable {
    public var avg10 = 0.0, avg60 = 0.0, avg300 = 0.0
    public var totalMicroseconds: UInt64 = 0
    public init() {}
}

/// Wakes when an extension's footprint (not its usage) goes over a budget: how Appex
/// enforces the footprint limit while the kernel's hard limit keeps room for clean cache
/// (see `CgroupLimits.forFootprint`).
///
/// Usage is never below the footprint, so usage crossing the budget is the cheap first
/// signal (v1: threshold eventfd). While usage stays above the budget, the footprint is
/// re-read from memory.stat every `pollInterval`. v2 has no usage threshold events, so
/// there it re-reads every `pollInterval` throughout.
public final class FootprintWatcher: Sendable {
    public let cgroup: ExtensionCgroup
    public let budget: Int64
    public let pollInterval: Duration
    let threshold: ThresholdWatcher

    init(cgroup: ExtensionCgroup, budget: Int64, pollInterval: Duration) throws {
        self.cgroup = cgroup
        self.budget = budget
        self.pollInterval = pollInterval
        threshold = try cgroup.makeThresholdWatcher(bytes: budget)
    }

    /// Pollable descriptor of the usage threshold (POLLIN).
    public var fd: Int32 { threshold.fd }

    /// Returns the footprint once it exceeds the budget; nil on timeout, cancel or removal.
    public func wait(timeout: Duration? = nil) throws -> Int64? {
        let end = deadline(after: timeout)
        let interval = pollInterval.wholeNanoseconds
        while true {
            let usage: Int64
            let footprint: Int64
            do {
                usage = try cgroup.memoryCurrent()
                footprint = try cgroup.footprint()
            } catch let e as CgroupError where e.errno == .noSuchFileOrDirectory {
                return nil
            }
            if footprint > budget { return footprint }
            let now = MonotonicTime.now
            if let end, now >= end { return nil }
            // Above the budget in usage (or on v2): poll; below it on v1: sleep until it crosses.
            let pollSoon = usage >= budget || cgroup.version == .v2
            let wake: UInt64? = pollSoon ? min(now + interval, end ?? .max) : end
            switch try threshold.source.wait(deadline: wake) {
            case .cancelled, .gone: return nil
            case .event, .timeout: continue
            }
        }
    }

    public func next(timeout: Duration? = nil) async throws -> Int64? {
        try await blockingAsync(cancel: { [threshold] in threshold.cancel() }) { [self] in try wait(timeout: timeout) }
    }

    public func cancel() { threshold.cancel() }
}

extension ExtensionCgroup {
    /// See `FootprintWatcher`.
    public func makeFootprintWatcher(budget: Int64, pollInterval: Duration = .milliseconds(100)) throws -> FootprintWatcher {
        try FootprintWatcher(cgroup: self, budget: budget, pollInterval: pollInterval)
    }
}

extension ExtensionCgroup {
    /// A PSI trigger on this cgroup's own `memory.pressure` (v2 only: v1 has per-cgroup
    /// vmpressure levels, not PSI; use `MemoryPressureMonitor.system()` there).
    public func makePressureMonitor(
        kind: MemoryPressureMonitor.Kind = .some, stall: Duration = .milliseconds(150),
        window: Duration = .seconds(2)
    ) throws -> MemoryPressureMonitor {
        guard version == .v2 else {
            throw CgroupError(
                "watch pressure of", path: memoryDir, errno: .notSupported,
                message: "per-cgroup PSI needs cgroup v2")
        }
        return try MemoryPressureMonitor(path: file("memory.pressure"), kind: kind, stall: stall, window: window)
    }
}
