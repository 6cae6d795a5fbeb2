import AppexPolicyCore
import AppexStateDirectory
import CSeccomp
import Synchronization

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
/// with the rule's errno (EPERM by default). Served by the shared seccomp pump
/// (DescriptorPump.seccomp) until the extension's filter has no users left (POLLHUP on the
/// listener) or `stop()` is called.
public final class SeccompNotifier: @unchecked Sendable {
    public let extensionIdentifier: String
    private let listener: Int32
    private let errnos: [Int32: Int32]
    private let defaultErrno: Int32
    private let counts = Mutex<[String: Int]>([:])
    /// 0: not started, 1: serving, 2: stopped.
    private let state = Mutex(0)
    private let onDenial: (@Sendable (String) -> Void)?
    /// The request and response buffers libseccomp sizes for this kernel; used on the pump only.
    private var request: UnsafeMutablePointer<seccomp_notif>?
    private var response: UnsafeMutablePointer<seccomp_notif_resp>?

    /// Takes ownership of `listenerFD`.
    public init(
        listenerFD: Int32, extensionIdentifier: String, errnos: [Int32: Int32],
        defaultErrno: Int32 = EPERM, onDenial: (@Sendable (String) -> Void)? = nil
    ) throws {
        self.listener = listenerFD
        self.extensionIdentifier = extensionIdentifier
        self.errnos = errnos
        self.defaultErrno = defaultErrno
        self.onDenial = onDenial
        guard seccomp_notify_alloc(&request, &response) == 0, request != nil, response != nil else {
            throw SandboxError("seccomp_notify_alloc", errno: .noMemory)
        }
    }

    deinit {
        Sys.close(listener)
        seccomp_notify_free(request, response)
    }

    /// Starts answering. Throws when the pump cannot take the listener: the caller must not
    /// let the extension run, its denied calls would wait for an answer forever.
    public func start() throws {
        guard
            state.withLock({ s -> Bool in
                guard s == 0 else { return false }
                s = 1
                return true
            })
        else { return }
        do {
            try DescriptorPump.seccomp.add(listener) { [self] in
                if !answer() { DescriptorPump.seccomp.remove(listener) }
            }
        } catch {
            state.withLock { $0 = 2 }
            throw error
        }
    }

    /// Stops serving (after the extension is gone) and returns what was denied.
    @discardableResult
    public func stop() -> [DeniedSyscall] {
        let serving = state.withLock { s -> Bool in
            defer { if s == 1 { s = 2 } }
            return s == 1
        }
        if serving { DescriptorPump.seccomp.remove(listener) }
        return denials
    }

    /// Denials so far, by syscall name.
    public var denials: [DeniedSyscall] {
        counts.withLock { c in c.keys.sorted().map { DeniedSyscall(syscall: $0, count: c[$0]!) } }
    }

    /// Answers one pending notification, if any (the pump calls again while more wait). False
    /// once the filter has no users left.
    private func answer() -> Bool {
        var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, 0) >= 0 else { return true }
        if p.revents & Int16(POLLIN) == 0 {
            return p.revents & Int16(POLLHUP | POLLERR | POLLNVAL) == 0
        }
        guard let req = request, let resp = response else { return false }
        // The kernel rejects a request buffer that is not all zeros.
        memset(req, 0, MemoryLayout<seccomp_notif>.size)
        if seccomp_notify_receive(listener, req) != 0 { return true }  // the caller died meanwhile
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
        return true
    }
}
