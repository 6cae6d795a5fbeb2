import AppexPolicy
import CAppexLauncher
import CSeccomp
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One denied system call as the supervisor saw it.
public struct DeniedSyscall: Codable, Sendable, Equatable, Hashable {
    public var syscall: String
    public var count: Int
    public init(syscall: String, count: Int) {
        self.syscall = syscall
        self.count = count
    }
}

/// Answers the notify-action syscalls of one extension: records each by name, replies
/// with the rule's errno (EPERM by default). Runs on its own thread until the extension's
/// filter has no users left (POLLHUP on the listener) or `stop()` is called.
public final class SeccompNotifier: @unchecked Sendable {
    public let extensionIdentifier: String
    private let listener: Int32
    private let stopFD: Int32
    private let stopWriteFD: Int32
    private let errnos: [Int32: Int32]
    private let defaultErrno: Int32
    private let counts = Protected<[String: Int]>([:])
    private let finished = DispatchSemaphore(value: 0)
    /// 0: not started, 1: serving, 2: joined.
    private let state = Protected(0)
    private let onDenial: (@Sendable (String) -> Void)?

    /// Takes ownership of `listenerFD`.
    public init(listenerFD: Int32, extensionIdentifier: String, errnos: [Int32: Int32],
                defaultErrno: Int32 = EPERM, onDenial: (@Sendable (String) -> Void)? = nil) throws {
        self.listener = listenerFD
        self.extensionIdentifier = extensionIdentifier
        self.errnos = errnos
        self.defaultErrno = defaultErrno
        self.onDenial = onDenial
        var p: [Int32] = [-1, -1]
        if appex_pipe_cloexec(&p) != 0 { throw Sys.fail("pipe2") }
        self.stopFD = p[0]
        self.stopWriteFD = p[1]
    }

    deinit {
        Sys.close(listener)
        Sys.close(stopFD)
        Sys.close(stopWriteFD)
    }

    public func start() {
        guard state.withLock({ s -> Bool in
            guard s == 0 else { return false }
            s = 1
            return true
        }) else { return }
        let thread = Thread { [self] in
            self.serve()
            self.finished.signal()
        }
        thread.name = "appex-seccomp-notify"
        thread.start()
    }

    /// Stops serving (after the extension is gone) and returns what was denied.
    @discardableResult
    public func stop() -> [DeniedSyscall] {
        var one: UInt8 = 1
        _ = write(stopWriteFD, &one, 1)
        // Join once; later calls only read the result.
        let mustJoin = state.withLock { s -> Bool in
            defer { if s == 1 { s = 2 } }
            return s == 1
        }
        if mustJoin { finished.wait() }
        return denials
    }

    /// Denials so far, by syscall name.
    public var denials: [DeniedSyscall] {
        counts.withLock { c in c.keys.sorted().map { DeniedSyscall(syscall: $0, count: c[$0]!) } }
    }

    private func serve() {
        var req: UnsafeMutablePointer<seccomp_notif>?
        var resp: UnsafeMutablePointer<seccomp_notif_resp>?
        guard seccomp_notify_alloc(&req, &resp) == 0, let req, let resp else { return }
        defer { seccomp_notify_free(req, resp) }
        var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
        while true {
            fds[0].revents = 0
            fds[1].revents = 0
            let n = poll(&fds, 2, -1)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[0].revents & Int16(POLLIN) != 0 {
                // The kernel rejects a request buffer that is not all zeros.
                memset(req, 0, MemoryLayout<seccomp_notif>.size)
                if seccomp_notify_receive(listener, req) != 0 { continue }  // the caller died meanwhile
                let nr = req.pointee.data.nr
                var name = "syscall \(nr)"
                if let c = seccomp_syscall_resolve_num_arch(req.pointee.data.arch, nr) {
                    name = String(cString: c)
                    free(c)
                } else if let newer = SyscallNames.name(nr) {
                    // Newer than libseccomp (the filter admits only the native architecture).
                    name = newer
                }
                counts.withLock { $0[name, default: 0] += 1 }
                onDenial?(name)
                memset(resp, 0, MemoryLayout<seccomp_notif_resp>.size)
                resp.pointee.id = req.pointee.id
                resp.pointee.error = -(errnos[nr] ?? defaultErrno)
                resp.pointee.val = 0
                resp.pointee.flags = 0
                _ = seccomp_notify_respond(listener, resp)
                continue
            }
            if fds[1].revents != 0 { return }
            if fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return }
        }
    }
}
