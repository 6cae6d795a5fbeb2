import AppexCgroups
import CAppexLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The supervisor's one thread of control: an epoll loop over every descriptor it watches
/// (extension channels, pidfds, the control socket and its clients), with timers and a queue
/// of closures posted from other threads.
///
/// Why a loop rather than actors: a warm request is two hops through appexd (host → appexd →
/// extension → appexd → host), and its budget is a few hundred microseconds. Here each hop is
/// one epoll wakeup and one recvmsg/sendmsg, with no task scheduling in between, and every
/// piece of supervisor state is touched from this thread only, so none of it needs a lock.
/// Slow work (building a sandbox, cloning an extension, removing a cgroup, copying a bundle)
/// runs on worker threads and posts its result back.
public final class EventLoop: @unchecked Sendable {
    public typealias TimerID = UInt64

    private let epfd: Int32
    /// An eventfd that `post` writes to wake the loop.
    private let wakeFD: Int32
    private var handlers: [Int32: () -> Void] = [:]
    private var timers = TimerQueue()
    /// Closures posted from any thread, run by the loop.
    private let posted = Mutex<[@Sendable () -> Void]>([])
    private var stopping = false
    /// The thread in `run`, 0 when the loop is not running.
    private let loopThread = Atomic<pthread_t>(0)

    public init() throws {
        epfd = appex_epoll_create()
        guard epfd >= 0 else { throw SupervisorError.errno("epoll_create1") }
        wakeFD = appex_eventfd()
        guard wakeFD >= 0 else { throw SupervisorError.errno("eventfd") }
        try add(wakeFD)
    }

    deinit {
        close(epfd)
        close(wakeFD)
    }

    /// Whether the caller is the loop's thread (state may be touched only there).
    public var isLoopThread: Bool {
        let t = loopThread.load(ordering: .relaxed)
        return t != 0 && pthread_equal(t, pthread_self()) != 0
    }

    /// For the entry of a method that is loop only: stops a debug build when another thread
    /// calls it while the loop runs (before `run`, set-up happens on one thread). Costs
    /// nothing in a release build.
    public func assertOnLoop(_ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        assert(
            loopThread.load(ordering: .relaxed) == 0 || isLoopThread,
            "\(function) is loop only, called from another thread", file: file, line: line)
    }

    // MARK: descriptors (loop thread only)

    /// Calls `handler` each time `fd` is readable (level-triggered: a handler that reads one
    /// frame is called again while more wait). Also fires on hang-up and error.
    public func register(_ fd: Int32, _ handler: @escaping () -> Void) throws {
        assertOnLoop()
        precondition(handlers[fd] == nil, "fd \(fd) registered twice")
        try add(fd)
        handlers[fd] = handler
    }

    /// Calls `handler` each time `fd` signals a priority event (POLLPRI: a PSI trigger).
    public func registerPriority(_ fd: Int32, _ handler: @escaping () -> Void) throws {
        assertOnLoop()
        precondition(handlers[fd] == nil, "fd \(fd) registered twice")
        guard appex_epoll_add_priority(epfd, fd) == 0 else { throw SupervisorError.errno("epoll_ctl ADD fd \(fd) (EPOLLPRI)") }
        handlers[fd] = handler
    }

    /// Stops watching `fd` (before the caller closes it).
    public func unregister(_ fd: Int32) {
        assertOnLoop()
        guard handlers.removeValue(forKey: fd) != nil else { return }
        _ = appex_epoll_del(epfd, fd)
    }

    private func add(_ fd: Int32) throws {
        guard appex_epoll_add(epfd, fd) == 0 else { throw SupervisorError.errno("epoll_ctl ADD fd \(fd)") }
    }

    // MARK: timers (loop thread only)

    /// Runs `body` once, `after` from now, on the loop.
    @discardableResult
    public func schedule(after: Duration, _ body: @escaping () -> Void) -> TimerID {
        assertOnLoop()
        return timers.add(at: MonotonicTime.now + after.wholeNanoseconds, body)
    }

    public func cancel(_ timer: TimerID?) {
        assertOnLoop()
        if let timer { timers.cancel(timer) }
    }

    // MARK: from any thread

    /// Runs `body` on the loop, soon. Safe from any thread.
    public func post(_ body: @escaping @Sendable () -> Void) {
        posted.withLock { $0.append(body) }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Ends `run` after the current iteration. Safe from any thread.
    public func stop() {
        post { [self] in stopping = true }
    }

    // MARK: the loop

    /// Runs the loop on the calling thread until `stop`.
    public func run() {
        loopThread.store(pthread_self(), ordering: .relaxed)
        var ready = [Int32](repeating: -1, count: 64)
        while !stopping {
            let timeout = timers.millisecondsUntilNext(now: MonotonicTime.now)
            let n = appex_epoll_wait(epfd, &ready, Int32(ready.count), timeout)
            if n < 0 {
                if errno == EINTR { continue }
                fatalError("epoll_wait: \(String(cString: strerror(errno)))")
            }
            for i in 0..<Int(n) {
                let fd = ready[i]
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                    continue
                }
                // A handler may unregister another descriptor of this batch: look it up again.
                handlers[fd]?()
            }
            runPosted()
            let now = MonotonicTime.now
            while let body = timers.popDue(now: now) { body() }
        }
        runPosted()
        loopThread.store(0, ordering: .relaxed)
        stopping = false
    }

    private func runPosted() {
        let batch = posted.withLock { posted in
            defer { posted.removeAll(keepingCapacity: true) }
            return posted
        }
        for body in batch { body() }
    }
}
