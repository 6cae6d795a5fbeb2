import AppexWire

#if canImport(Glibc)
import Glibc
#endif

/// An extension executable started as the launcher leaves one for its socket (the given end
/// at fd 3, stdin /dev/null, a clean signal mask and dispositions) but without the sandbox:
/// for the tests and `appex conformance`, which play appexd against it.
public enum ExtensionChild {
    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts command[0] with `environment` ("KEY=value" each); `socket` becomes its fd 3.
    /// Its stderr goes to `logPath` (created 0600), and its stdout too when `stdoutToLog`,
    /// else to /dev/null. Returns its pid.
    public static func spawn(
        _ command: [String], environment: [String], socket: WireSocket, logPath: String,
        stdoutToLog: Bool
    ) throws(SpawnError) -> pid_t {
        // dup2 onto 3 clears close-on-exec unless the source already is 3: use a copy above it,
        // so the child always inherits exactly one socket, at 3.
        let source = fcntl(socket.fd, F_DUPFD_CLOEXEC, 10)
        guard source >= 0 else { throw SpawnError(description: "fcntl(F_DUPFD_CLOEXEC): \(String(cString: strerror(errno)))") }
        defer { close(source) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if stdoutToLog {
            posix_spawn_file_actions_adddup2(&actions, 2, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, source, WireProtocol.extensionSocketFD)

        // A clean signal state: the parent may block or ignore signals the child needs.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { for p in argv + envp { free(p) } }
        var child: pid_t = 0
        let r = posix_spawn(&child, command[0], &actions, &attributes, argv, envp)
        guard r == 0 else { throw SpawnError(description: "posix_spawn \(command[0]): \(String(cString: strerror(r)))") }
        return child
    }
}
