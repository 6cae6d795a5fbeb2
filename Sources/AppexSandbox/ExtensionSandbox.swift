import AppexBundle
import AppexCgroups
import AppexStateDirectory
import CAppexLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One extension's namespaces and filesystem view, built once and entered by every launch.
///
/// Building the view costs about 15 mounts and a pivot_root, and a mount namespace that
/// dies with its last process is torn down on that process's exit path: together most of
/// what a sandboxed launch costs beyond a bare fork+exec (Docs/launch-sequence.md). So the
/// namespaces (mount with the view, pid, ipc, uts and, unless the policy grants the host
/// network, net) are made once per extension with `appex-sandbox-init` as their pid 1 and
/// holder, as a pod's pause container holds a pod's. A launch then clones straight into the
/// pid namespace and `setns`es into the rest: no mounts, no teardown.
///
/// What instances of one extension share: its view (the same container, bundle and `/tmp`),
/// its pid namespace (with `/proc` showing only its own uid's processes), its loopback-only
/// network. Nothing is shared between different extensions. The cgroup, uid switch, rlimits
/// and seccomp filter are still applied per launch.
///
/// Lifetime: the init lives while this object holds the write end of its stdin pipe.
/// `close()` (or deinit, or the supervisor's death) ends it, and the kernel kills whatever is
/// still running in the pid namespace when its pid 1 exits.
public final class ExtensionSandbox: Sendable {
    /// The namespaces a launch enters (`LaunchPlan.enterSandboxPIDFD` with these).
    public let namespaces: LaunchPlan.Namespaces
    /// The init, in the supervisor's pid namespace.
    public let initPID: Int32
    /// How long `create` took: the view's operations, namespaces, mounts, exec of the init.
    public let buildNanos: UInt64
    /// The init's pidfd and the write end of its stdin (-1 once closed), and copies of the
    /// pidfds of processes launched into the sandbox that may not have been reaped yet.
    private let state: Mutex<(pidfd: Int32, lifeline: Int32, launched: [Int32])>
    /// The checked bundle, and its mount in the view (the `open_tree` copy, now attached):
    /// every launch execs a descriptor opened beneath it.
    public let bundle: CheckedBundle
    private let bundleTree: Int32

    /// The init's uid and gid: one of Appex's own, for this extension's sandboxes only
    /// (`UIDAllocator.sandboxInitUID`), owning nothing the extension can reach. A shared id
    /// such as `nobody` would let any other process running as it signal or trace the init.
    public let initUID: UInt32

    /// Builds the sandbox for `spec` around `container`: namespaces, the view from
    /// `FilesystemView`, and the init inside. Throws `LaunchError` naming a failed step
    /// (`mount data dir: ENOENT …`). `checkedBundle`: `CheckedBundle.open(spec)` when the
    /// caller has already checked it (nil: checked here). `preparedNetwork`: a network
    /// namespace made ahead, entered instead of making one when the sandbox isolates the
    /// network (and closed here either way it is taken).
    public static func create(
        spec: SandboxSpec, container: Container, store: ContainerStore,
        isolateNetwork: Bool = true,
        preparedNetwork: PreparedNetworkNamespace? = nil,
        initExecutable: String? = nil,
        checkedBundle: CheckedBundle? = nil
    ) throws -> ExtensionSandbox {
        try create(
            spec: spec, containerPlanned: { container }, containerMade: {}, store: store,
            isolateNetwork: isolateNetwork, preparedNetwork: preparedNetwork, initExecutable: initExecutable,
            checkedBundle: checkedBundle)
    }

    /// `create` for a container that another thread is still planning and making
    /// (`ContainerStore.plan`, then `makeDirectories`; `ExtensionRun.prepare`, `Handoff`):
    /// what needs no container comes first (the bundle's tree, the init's executable, its
    /// pipe); `containerPlanned` returns the planned container (after which the init's uid is
    /// found in the uid table's cache), and `containerMade` returns once the directories the
    /// view mounts exist, just before the init's clone. Either throws when its side failed.
    static func create(
        spec: SandboxSpec, containerPlanned: () throws -> Container, containerMade: () throws -> Void,
        store: ContainerStore, isolateNetwork: Bool, preparedNetwork: PreparedNetworkNamespace?,
        initExecutable: String? = nil, checkedBundle: CheckedBundle?
    ) throws -> ExtensionSandbox {
        let start = MonotonicTime.now
        let bundle = try checkedBundle ?? CheckedBundle.open(spec)
        let tree = try bundle.cloneTree()
        var treeOwned = true
        defer { if treeOwned { Sys.close(tree) } }
        let initPath = try initExecutable ?? SandboxInitLocator.path()
        // O_PATH: enough for execveat, opens nothing for reading.
        let initFD = try Sys.open(initPath, BundleFileAccess.oPath)
        defer { Sys.close(initFD) }
        let devnull = try Sys.open("/dev/null", O_RDWR)
        defer { Sys.close(devnull) }
        var pipeFDs: [Int32] = [-1, -1]
        guard appex_pipe_cloexec(&pipeFDs) == 0 else { throw Sys.fail("pipe for the sandbox init") }
        defer { Sys.close(pipeFDs[0]) }
        let container = try containerPlanned()
        let initUID = try store.uids.sandboxInitUID(for: spec.bundleIdentifier)
        let mounts = try FilesystemView.operations(for: spec, container: container, bundle: bundle, bundleTree: tree)

        var namespaces: LaunchPlan.Namespaces = [.mount, .pid, .ipc, .uts]
        if !spec.hostNetwork && isolateNetwork { namespaces.insert(.network) }
        // The init holds the namespace once it has entered it; this descriptor is not needed after.
        let netns = namespaces.contains(.network) ? preparedNetwork?.take() ?? -1 : -1
        defer { if netns >= 0 { Sys.close(netns) } }

        var plan = LaunchPlan(executable: initPath, arguments: ["appex-sandbox-init"], environment: [])
        plan.executableFD = initFD
        plan.namespaces = namespaces
        plan.networkNamespaceFD = netns
        plan.hostname = spec.hostname
        plan.rootDirectory = store.rootfsPath
        plan.mounts = mounts
        plan.workingDirectory = "/"
        plan.stdin = pipeFDs[0]
        plan.stdout = devnull
        plan.stderr = devnull
        plan.credentials = .init(uid: initUID, gid: initUID)
        plan.noNewPrivileges = true
        let p: LaunchedProcess
        do {
            try containerMade()
            p = try Launcher.launch(plan)
        } catch {
            Sys.close(pipeFDs[1])
            throw error
        }
        treeOwned = false
        return ExtensionSandbox(
            namespaces: namespaces.subtracting(.pid), pid: p.pid, pidfd: p.pidfd,
            lifeline: pipeFDs[1], buildNanos: MonotonicTime.now - start,
            bundle: bundle, bundleTree: tree, initUID: initUID)
    }

    private init(
        namespaces: LaunchPlan.Namespaces, pid: Int32, pidfd: Int32, lifeline: Int32, buildNanos: UInt64,
        bundle: CheckedBundle, bundleTree: Int32, initUID: UInt32
    ) {
        self.namespaces = namespaces
        self.initPID = pid
        self.state = Mutex((pidfd, lifeline, []))
        self.buildNanos = buildNanos
        self.bundle = bundle
        self.bundleTree = bundleTree
        self.initUID = initUID
    }

    deinit {
        close()
        Sys.close(bundleTree)
    }

    /// The executable for one launch (`LaunchPlan.executableFD`): opened beneath the bundle's
    /// mount in this view, and the very file `CheckedBundle` checked. The caller closes it.
    public func openExecutable() throws -> Int32 {
        try bundle.executable(beneath: bundleTree)
    }

    /// The init's pidfd (-1 once closed). Owned by the sandbox.
    public var pidfd: Int32 { state.withLock { $0.pidfd } }

    /// Whether the init is still running (a launch into a dead sandbox fails, saying so).
    public var isAlive: Bool {
        state.withLock { st in
            guard st.pidfd >= 0 else { return false }
            var p = pollfd(fd: st.pidfd, events: Int16(POLLIN), revents: 0)
            return poll(&p, 1, 0) == 0
        }
    }

    /// Launches `plan` inside the sandbox: it enters the namespaces instead of making them
    /// (the launcher ignores the plan's view and host name), and execs the checked executable
    /// unless the plan names a descriptor of its own. The caller owns the returned pidfd and reaps the
    /// process; the sandbox keeps a copy so `close()` can reap it if the caller has not.
    public func launch(_ plan: LaunchPlan) throws -> LaunchedProcess {
        try state.withLock { st in
            guard st.pidfd >= 0 else { throw SandboxError("launch into sandbox", message: "the sandbox is closed") }
            // Forget processes already reaped by their owners.
            st.launched.removeAll { fd in
                guard Self.isReaped(fd) else { return false }
                Sys.close(fd)
                return true
            }
            var plan = plan
            plan.enterSandboxPIDFD = st.pidfd
            plan.namespaces = namespaces
            // Exec the checked executable by descriptor, never a path looked up again.
            var executable: Int32 = -1
            if plan.executableFD < 0 {
                executable = try openExecutable()
                plan.executableFD = executable
            }
            defer { Sys.close(executable) }
            let p = try Launcher.launch(plan)
            let copy = fcntl(p.pidfd, F_DUPFD_CLOEXEC, 3)
            if copy >= 0 { st.launched.append(copy) }
            return p
        }
    }

    /// Whether the process behind `pidfd` has been reaped (by anyone).
    private static func isReaped(_ pidfd: Int32) -> Bool {
        var code: Int32 = 0, status: Int32 = 0
        return appex_wait_pidfd(pidfd, WNOHANG | WNOWAIT, &code, &status) < 0 && errno == ECHILD
    }

    /// Sends the init (and what was launched into the sandbox) SIGKILL without waiting, so the
    /// kernel tears the namespaces down while the caller does other work; `close()` still
    /// waits for it. A one-shot run calls this as soon as its extension has exited.
    public func beginClose() {
        state.withLock { st in
            guard st.pidfd >= 0 else { return }
            for fd in st.launched { _ = appex_pidfd_send_signal(fd, SIGKILL) }
            _ = appex_pidfd_send_signal(st.pidfd, SIGKILL)
        }
    }

    /// Ends what runs in the sandbox and its init, and reaps them. Idempotent.
    ///
    /// Order matters: an exiting init waits until every process of its pid namespace has been
    /// reaped, and processes launched into the sandbox are the launcher's children, so they
    /// are killed and reaped here first (those their owners already reaped are skipped).
    public func close() {
        state.withLock { st in
            guard st.pidfd >= 0 else { return }
            var code: Int32 = 0, status: Int32 = 0
            for fd in st.launched {
                _ = appex_pidfd_send_signal(fd, SIGKILL)
                _ = appex_wait_pidfd(fd, 0, &code, &status)  // ECHILD: its owner reaped it
                Sys.close(fd)
            }
            Sys.close(st.lifeline)
            _ = appex_pidfd_send_signal(st.pidfd, SIGKILL)
            _ = appex_wait_pidfd(st.pidfd, 0, &code, &status)
            Sys.close(st.pidfd)
            st = (-1, -1, [])
        }
    }
}
