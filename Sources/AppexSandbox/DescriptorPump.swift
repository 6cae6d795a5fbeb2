import AppexStateDirectory
import CAppexLinux
import Dispatch
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// One thread that serves many descriptors: each extension's output pipe, each extension's
/// seccomp listener. A thread apiece (what this replaced) cost a stack, a stop pipe and a
/// scheduler entry per live extension: with 1,000 idle extensions, 2,000 threads and 6,000
/// descriptors doing nothing.
///
/// A handler runs on the pump's thread when its descriptor is readable or hung up (level
/// triggered), and must not block. `remove` and `perform` run on that thread too, so once
/// `remove` returns no handler of that descriptor runs again; the caller still owns the
/// descriptor and closes it afterwards.
public final class DescriptorPump: @unchecked Sendable {
    /// Extensions' stdout/stderr copied into their logs.
    public static let logs = DescriptorPump(name: "appex-logs")
    /// Seccomp user notifications answered (denied calls counted): kept apart from the logs so
    /// a burst of output never delays an answer an extension's system call is waiting for.
    public static let seccomp = DescriptorPump(name: "appex-seccomp")

    private let name: String
    private let lock = HeapMutex()
    private var epfd: Int32 = -1
    private var wakeFD: Int32 = -1
    /// Indexed by descriptor: descriptors are small and dense, so a table finds a handler
    /// in one step, and it is not a Dictionary, whose first use (an `Int32: Hashable` lookup
    /// through every conformance record) every `appex run` would pay.
    private var handlers: [(() -> Void)?] = []
    private var commands: [() -> Void] = []
    private var thread: pthread_t?

    init(name: String) {
        self.name = name
    }

    /// Calls `handler` on the pump's thread whenever `fd` is readable or hung up, until `remove`.
    public func add(_ fd: Int32, _ handler: @escaping () -> Void) throws {
        try start()
        guard fd >= 0 else { throw SandboxError("epoll_ctl(ADD) for \(name)", errno: .badFileDescriptor) }
        lock.lock()
        defer { lock.unlock() }
        while handlers.count <= Int(fd) { handlers.append(nil) }
        handlers[Int(fd)] = handler
        if appex_epoll_add(epfd, fd) != 0 {
            let error = Sys.fail("epoll_ctl(ADD) for \(name)")
            handlers[Int(fd)] = nil
            throw error
        }
    }

    /// Stops watching `fd`; after this returns its handler never runs again.
    public func remove(_ fd: Int32) {
        perform { [self] in
            // On the pump's thread, but `add` changes the table from others: under the lock.
            // The handler is released after the lock: it may hold the last reference to its
            // owner, whose deinit may come back here.
            lock.lock()
            _ = appex_epoll_del(epfd, fd)
            let released = handler(for: fd)
            if released != nil { handlers[Int(fd)] = nil }
            lock.unlock()
            withExtendedLifetime(released) {}
        }
    }

    /// The handler registered for `fd`, if any; under the lock.
    private func handler(for fd: Int32) -> (() -> Void)? {
        fd >= 0 && Int(fd) < handlers.count ? handlers[Int(fd)] : nil
    }

    /// Runs `body` on the pump's thread (at once when called from it) and waits for it.
    public func perform(_ body: @escaping () -> Void) {
        let done = DispatchSemaphore(value: 0)
        lock.lock()
        if let thread, pthread_equal(thread, pthread_self()) != 0 {
            lock.unlock()
            body()
            return
        }
        guard epfd >= 0 else {
            lock.unlock()
            body()
            return
        }
        commands.append {
            body()
            done.signal()
        }
        lock.unlock()
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        done.wait()
    }

    private func start() throws {
        lock.lock()
        defer { lock.unlock() }
        guard epfd < 0 else { return }
        let ep = appex_epoll_create()
        if ep < 0 { throw Sys.fail("epoll_create1 for \(name)") }
        let wake = appex_eventfd()
        if wake < 0 {
            let error = Sys.fail("eventfd for \(name)")
            Sys.close(ep)
            throw error
        }
        guard appex_epoll_add(ep, wake) == 0 else {
            let error = Sys.fail("epoll_ctl(ADD) for \(name)")
            Sys.close(ep)
            Sys.close(wake)
            throw error
        }
        epfd = ep
        wakeFD = wake
        // A small stack: the handlers copy through heap buffers and call nothing deep.
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setstacksize(&attr, 256 << 10)
        let box = Unmanaged.passRetained(self).toOpaque()
        var t = pthread_t()
        let r = pthread_create(
            &t, &attr,
            { arg in
                let pump = Unmanaged<DescriptorPump>.fromOpaque(arg!).takeRetainedValue()
                pump.run()
                return nil
            }, box)
        guard r == 0 else {
            Unmanaged<DescriptorPump>.fromOpaque(box).release()
            Sys.close(ep)
            Sys.close(wake)
            epfd = -1
            wakeFD = -1
            throw SandboxError("pthread_create for \(name)", errno: Errno(rawValue: r))
        }
        pthread_detach(t)
        thread = t
    }

    /// The pump's thread: forever (the two pumps live as long as the process).
    private func run() {
        // What top -H and /proc/PID/task show (at most 15 bytes). pthread, not Foundation's
        // Thread: this runs in every `appex run`, and Thread's first use costs.
        appex_name_thread(name)
        var ready = [Int32](repeating: 0, count: 64)
        while true {
            let n = ready.withUnsafeMutableBufferPointer { appex_epoll_wait(epfd, $0.baseAddress, 64, -1) }
            if n < 0 { continue }  // EINTR
            for fd in ready.prefix(Int(n)) {
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                    continue
                }
                lock.lock()
                let call = handler(for: fd)
                lock.unlock()
                call?()
            }
            lock.lock()
            let pending = commands
            commands = []
            lock.unlock()
            for c in pending { c() }
        }
    }
}
