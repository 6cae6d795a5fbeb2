import AppexSandbox
import AppexTransferPlan
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One `appex-transfer` process (Docs/transfers.md): spawned by appexd's loop thread, so that
/// its parent-death signal (set by the worker) fires when appexd dies and not when some
/// short-lived thread does; as the extension's uid and the group's gid (the worker drops root
/// before it reads its plan); with the group directory at descriptor 3, its plan on standard
/// input and its reports on descriptor 4. The plan is written only once `place` has put the
/// worker where it runs (its cgroup): until then it waits on standard input, having done no
/// more than drop root.
struct TransferWorkerProcess {
    let pid: pid_t
    /// appexd's end of the report pipe (non-blocking, close-on-exec).
    let reports: Int32

    /// `$APPEX_TRANSFER_WORKER`; else `appex-transfer` beside appexd's own file (a build
    /// directory), else in `../libexec/appex/` beside it (the installed layout, as
    /// appex-sandbox-init).
    static var executablePath: String {
        if let p = ProcessInfo.processInfo.environment["APPEX_TRANSFER_WORKER"], !p.isEmpty { return p }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let directory = URL(fileURLWithPath: exe).deletingLastPathComponent()
        let beside = directory.path + "/appex-transfer"
        if access(beside, X_OK) == 0 { return beside }
        return directory.deletingLastPathComponent().path + "/libexec/appex/appex-transfer"
    }

    struct SpawnError: Error, CustomStringConvertible {
        var description: String
    }

    private static func fail(_ what: String, _ code: Int32 = errno) -> SpawnError {
        SpawnError(description: "\(what): \(String(cString: strerror(code)))")
    }

    /// A descriptor at 10 or above (close-on-exec), so the child's dup2s to 0, 3 and 4 never
    /// meet one of their own sources; the original is closed.
    private static func lifted(_ fd: Int32) throws -> Int32 {
        let high = fcntl(fd, F_DUPFD_CLOEXEC, 10)
        close(fd)
        if high < 0 { throw fail("dup") }
        return high
    }

    /// Starts the worker for `plan` in the group directory `directory` (which stays the
    /// caller's to close).
    static func spawn(
        plan: TransferPlan, directory: Int32, uid: UInt32, gid: UInt32,
        place: (pid_t) throws -> Void
    ) throws -> TransferWorkerProcess {
        var planPipe: [Int32] = [0, 0], reportPipe: [Int32] = [0, 0]
        // Close-on-exec from the start (socketpairs: Glibc's module has no pipe2), so a launch
        // cloning on another thread never inherits one.
        let streamCloexec = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, streamCloexec, 0, &planPipe) == 0 else { throw fail("socketpair") }
        guard socketpair(AF_UNIX, streamCloexec, 0, &reportPipe) == 0 else {
            close(planPipe[0])
            close(planPipe[1])
            throw fail("socketpair")
        }
        var toClose: [Int32] = []
        defer { toClose.forEach { _ = close($0) } }
        let planRead = try lifted(planPipe[0]), planWrite = planPipe[1]
        let reportRead = reportPipe[0], reportWrite = try lifted(reportPipe[1])
        let dir = fcntl(directory, F_DUPFD_CLOEXEC, 10)
        if dir < 0 { throw fail("dup") }
        toClose += [planRead, reportWrite, dir, planWrite]

        let text = Array(plan.encoded.utf8)
        guard text.count < 60_000 else {
            close(reportRead)
            throw SpawnError(description: "the plan is too long")
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, planRead, 0)
        posix_spawn_file_actions_adddup2(&actions, dir, ContainerDirectoryFD.value)
        posix_spawn_file_actions_adddup2(&actions, reportWrite, 4)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigfillset(&defaults)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let path = executablePath
        let argv = [path, "--uid", "\(uid)", "--gid", "\(gid)", "--parent", "\(getpid())"]
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var env: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/bin:/bin"), nil]
        defer { env.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, &cArgs, &env)
        guard rc == 0 else {
            close(reportRead)
            throw fail("spawn \(path)", rc)
        }
        // The plan fits the socket's buffer (headers and URL are bounded), so this write
        // never blocks the loop.
        do {
            try place(pid)
            guard text.withUnsafeBytes({ write(planWrite, $0.baseAddress, $0.count) }) == text.count else {
                throw fail("write the plan")
            }
        } catch {
            Glibc.kill(pid, SIGKILL)
            while waitpid(pid, nil, 0) < 0 && errno == EINTR {}
            close(reportRead)
            throw error
        }
        _ = fcntl(reportRead, F_SETFL, fcntl(reportRead, F_GETFL) | O_NONBLOCK)
        return TransferWorkerProcess(pid: pid, reports: reportRead)
    }
}

enum ContainerDirectoryFD {
    static let value: Int32 = 3
}
