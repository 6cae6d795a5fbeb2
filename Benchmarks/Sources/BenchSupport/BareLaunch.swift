import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The cold floor: the extension's executable started with plain posix_spawn, no sandbox, its
/// socketpair end at fd 3 as the launcher leaves it, timed until its Hello arrives. What is
/// left is the extension's own start-up (loader, runtime, SDK) plus one fork+exec.
public struct BareLaunch: Sendable {
    let executable: String
    let bundleIdentifier: String
    let home: String
    /// The harness's own way to stop with a message.
    let fail: @Sendable (String) -> Never

    public init(executable: String, bundleIdentifier: String, home: String, fail: @escaping @Sendable (String) -> Never) {
        self.executable = executable
        self.bundleIdentifier = bundleIdentifier
        self.home = home
        self.fail = fail
    }

    /// Nanoseconds from posix_spawn to the Hello record being readable.
    public func once() -> UInt64 {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            fail("socketpair: \(String(cString: strerror(errno)))")
        }
        defer { close(fds[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 onto 3 clears close-on-exec there; everything else of ours stays closed.
        posix_spawn_file_actions_adddup2(&actions, fds[1], 3)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let env = ["APPEX_SOCKET_FD=3", "APPEX_BUNDLE_IDENTIFIER=\(bundleIdentifier)", "HOME=\(home)", "PATH=/usr/bin:/bin"]
        let cenv = env.map { strdup($0) } + [nil]
        let cargs = [strdup(executable), nil]
        defer { (cenv + cargs).forEach { free($0) } }
        var pid: pid_t = 0
        let start = now()
        let rc = posix_spawn(&pid, executable, &actions, nil, cargs, cenv)
        close(fds[1])
        guard rc == 0 else { fail("posix_spawn \(executable): \(String(cString: strerror(rc)))") }
        var pfd = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
        let ready = poll(&pfd, 1, 10_000)
        let elapsed = now() - start
        var byte: UInt8 = 0
        let got = ready == 1 ? recv(fds[0], &byte, 1, Int32(MSG_DONTWAIT)) : -1
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard got > 0 else { fail("\(executable) sent no Hello when started bare (poll \(ready), recv \(got))") }
        return elapsed
    }
}
