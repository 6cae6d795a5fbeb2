import CAppexLauncher

#if canImport(Glibc)
import Glibc
#endif

/// Everything the launcher's child does, computed before the clone. Plain data: the
/// launcher turns it into the C `appex_plan` and nothing in it runs code in the child.
public struct LaunchPlan: Sendable {
    public struct Namespaces: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let mount = Namespaces(rawValue: UInt32(APPEX_NS_MOUNT))
        public static let pid = Namespaces(rawValue: UInt32(APPEX_NS_PID))
        public static let ipc = Namespaces(rawValue: UInt32(APPEX_NS_IPC))
        public static let uts = Namespaces(rawValue: UInt32(APPEX_NS_UTS))
        public static let network = Namespaces(rawValue: UInt32(APPEX_NS_NET))
        public static let all: Namespaces = [.mount, .pid, .ipc, .uts, .network]
    }

    public struct ResourceLimit: Sendable, Equatable {
        public var resource: Int32
        public var soft: UInt64
        public var hard: UInt64
        public init(resource: Int32, soft: UInt64, hard: UInt64) {
            self.resource = resource
            self.soft = soft
            self.hard = hard
        }
    }

    public struct Credentials: Sendable, Equatable {
        public var uid: UInt32
        public var gid: UInt32
        public var supplementaryGroups: [UInt32]
        public init(uid: UInt32, gid: UInt32, supplementaryGroups: [UInt32] = []) {
            self.uid = uid
            self.gid = gid
            self.supplementaryGroups = supplementaryGroups
        }
    }

    /// Path of the executable as the child sees it (inside the view when there is one).
    public var executable: String
    /// argv, including argv[0].
    public var arguments: [String]
    /// `NAME=value` entries.
    public var environment: [String]
    public var namespaces: Namespaces = [.mount, .pid, .ipc, .uts]
    public var hostname: String?
    /// Host directory the view's tmpfs root is mounted on (privately); nil: no view.
    public var rootDirectory: String?
    public var mounts: [MountOperation] = []
    public var workingDirectory: String?
    /// v1: `tasks` descriptors the child writes "0" to. Owned by the caller.
    public var cgroupProcsFDs: [Int32] = []
    /// v2: the cgroup directory descriptor for `clone3(CLONE_INTO_CGROUP)`, or -1.
    public var cgroupDirectoryFD: Int32 = -1
    public var stdin: Int32 = -1
    public var stdout: Int32 = -1
    public var stderr: Int32 = -1
    public var resourceLimits: [ResourceLimit] = []
    /// nil keeps the caller's credentials (root): only for tests of the launcher.
    public var credentials: Credentials?
    public var seccomp: SeccompProgram?
    public var noNewPrivileges: Bool = true
    /// Enter this sandbox (the pidfd of its init, `ExtensionSandbox`) instead of making
    /// namespaces and a view; `namespaces` then names the ones it owns. -1: none.
    public var enterSandboxPIDFD: Int32 = -1
    /// Exec this descriptor instead of `executable` (how the sandbox init starts). -1: none.
    public var executableFD: Int32 = -1
    /// The extension's end of its socketpair with appexd: placed at fd 3 (the launcher's
    /// APPEX_CHANNEL_FD), the only descriptor beyond stdio the extension inherits. -1: none.
    public var channelFD: Int32 = -1
    /// With `.network` in `namespaces` (and no sandbox entered): a network namespace made
    /// beforehand (`PreparedNetworkNamespace`) that the child enters instead of cloning one. -1: none.
    public var networkNamespaceFD: Int32 = -1

    public init(executable: String, arguments: [String], environment: [String]) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }
}

/// Where launch time went, from the launcher's CLOCK_MONOTONIC stamps.
public struct LaunchPhases: Sendable, Equatable, Codable {
    /// Parent before clone → first instruction of the child.
    public var cloneNanos: UInt64
    /// Child start → sandbox complete (namespaces, cgroup, view, limits, uid, seccomp).
    public var sandboxNanos: UInt64
    /// Right before execve → the parent resumes (the new image replaced the old).
    public var execNanos: UInt64

    public var totalNanos: UInt64 { cloneNanos + sandboxNanos + execNanos }

    /// Phase name → microseconds, as `appex run --json` reports them.
    public var microseconds: [String: Int64] {
        [
            "clone": Int64(cloneNanos / 1000), "sandbox": Int64(sandboxNanos / 1000),
            "exec": Int64(execNanos / 1000), "launch": Int64(totalNanos / 1000),
        ]
    }
}

/// A child that reached `execve`.
public struct LaunchedProcess: Sendable {
    public var pid: Int32
    /// Owned by the receiver: close it after the final wait.
    public var pidfd: Int32
    /// The seccomp notify listener (owned by the receiver), or -1.
    public var listenerFD: Int32
    public var phases: LaunchPhases
}
