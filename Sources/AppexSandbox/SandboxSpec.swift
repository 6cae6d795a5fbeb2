import AppexPolicyCore

/// Everything the sandbox needs to run one extension, as plain data.
///
/// `SandboxSpec+Policy.swift` builds one from a bundle and its effective policy; tests build
/// them directly.
public struct SandboxSpec: Sendable, Equatable {
    /// Names the container, the uid, the log and the cgroup. Validated before use.
    public var bundleIdentifier: String
    /// The bundle directory, mounted read-only at `FilesystemView.bundlePath`. When it is a
    /// single executable file (a bare executable run as an extension), only that file is mounted.
    public var bundlePath: String
    /// The executable's host path; it must be `bundlePath` or inside it.
    public var executablePath: String
    public var arguments: [String]
    /// Added to the environment the sandbox sets (HOME, TMPDIR, PATH, APPEX_*).
    public var environment: [String: String]

    /// cgroup hard limit (bytes); the kernel OOM-kills above it.
    public var memoryMax: Int64?
    /// cgroup soft limit (bytes).
    public var memoryHigh: Int64?
    /// Tasks (processes and threads), cgroup `pids.max` and RLIMIT_NPROC.
    public var pidsMax: Int?
    /// RLIMIT_NOFILE, soft and hard.
    public var openFilesLimit: Int?

    /// Denied system calls; everything else is allowed.
    public var syscallRules: [SeccompRule]
    /// Host paths mounted read-only at the same place in the view, when they exist.
    public var readOnlyPaths: [String]
    /// App groups whose directories are mounted at `FilesystemView.groupsPath/<id>`.
    public var appGroups: [String]
    /// Share the host's network; otherwise a private network namespace (loopback down).
    public var hostNetwork: Bool
    public var hostname: String

    public init(
        bundleIdentifier: String, bundlePath: String, executablePath: String,
        arguments: [String] = [], environment: [String: String] = [:],
        memoryMax: Int64? = nil, memoryHigh: Int64? = nil, pidsMax: Int? = 64,
        openFilesLimit: Int? = 256, syscallRules: [SeccompRule] = [],
        readOnlyPaths: [String] = SandboxSpec.defaultReadOnlyPaths, appGroups: [String] = [],
        hostNetwork: Bool = false, hostname: String = "appex"
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.bundlePath = bundlePath
        self.executablePath = executablePath
        self.arguments = arguments
        self.environment = environment
        self.memoryMax = memoryMax
        self.memoryHigh = memoryHigh
        self.pidsMax = pidsMax
        self.openFilesLimit = openFilesLimit
        self.syscallRules = syscallRules
        self.readOnlyPaths = readOnlyPaths
        self.appGroups = appGroups
        self.hostNetwork = hostNetwork
        self.hostname = hostname
    }

    /// What a dynamically linked program needs to start (with the Swift runtime of a toolchain
    /// install, which SwiftPM-built executables name in their RUNPATH).
    public static let defaultReadOnlyPaths = ["/usr", "/lib", "/lib64", "/etc/ld.so.cache", "/opt/swift/usr/lib/swift/linux"]
}

/// One syscall the filter acts on, with the policy's action for it.
public struct SeccompRule: Sendable, Hashable {
    public var syscall: String
    public var action: SyscallAction

    public init(_ syscall: String, _ action: SyscallAction) {
        self.syscall = syscall
        self.action = action
    }
}
