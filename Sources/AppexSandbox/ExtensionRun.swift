import AppexCgroups
import AppexKillReason
import AppexStateDirectory
import CAppexLauncher
import CAppexLinux
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

public struct RunOptions: Sendable {
    /// The state root: containers, uids, logs. Default `/var/lib/appex`.
    public var stateDirectory: String
    /// Wall time after which the extension is killed (`run-timeout`).
    public var timeout: Duration?
    /// cgroups to use; nil detects the system's (`CgroupManager.detect(parentName: "appex")`).
    public var cgroups: CgroupManager?
    public var uidRange: ClosedRange<UInt32>
    /// Give the extension a network namespace of its own (loopback only) unless its policy
    /// grants the host network.
    public var isolateNetwork: Bool
    /// A network namespace made ahead (`PreparedNetworkNamespace`), which a sandbox this run
    /// builds enters instead of making one; nil: the sandbox's clone makes it.
    public var preparedNetwork: PreparedNetworkNamespace?
    /// Told each call a `notify` rule denied, with the bundle identifier and the call's name,
    /// on the seccomp pump's thread (the supervisor's metrics).
    public var onDeniedSyscall: (@Sendable (_ bundleIdentifier: String, _ syscall: String) -> Void)?
    /// Also copy the extension's stdout to ours and its stderr to ours (`appex run --stdio`),
    /// besides its log; through pipes, as always, never our descriptors themselves.
    public var passOutput = false

    public init(
        stateDirectory: String = "/var/lib/appex", timeout: Duration? = nil,
        cgroups: CgroupManager? = nil, uidRange: ClosedRange<UInt32> = UIDAllocator.defaultRange,
        isolateNetwork: Bool = true,
        onDeniedSyscall: (@Sendable (_ bundleIdentifier: String, _ syscall: String) -> Void)? = nil
    ) {
        self.stateDirectory = stateDirectory
        self.timeout = timeout
        self.cgroups = cgroups
        self.uidRange = uidRange
        self.isolateNetwork = isolateNetwork
        self.onDeniedSyscall = onDeniedSyscall
    }
}

/// What `appex run` reports.
public struct RunReport: Codable, Sendable, Equatable {
    public var bundleIdentifier: String
    public var pid: Int32
    public var uid: UInt32
    /// Exit code, or nil when a signal ended it.
    public var exitStatus: Int32?
    public var signal: Int32?
    /// How it ended when not by exiting: `run-timeout`, the kernel's OOM kill, its filter
    /// or another signal (nil when it exited).
    public var killReason: KillReason?
    public var peakMemoryBytes: Int64?
    public var oomKills: Int
    /// Phase name → microseconds: prepare (parent side: container, uid, seccomp, cgroup, and
    /// the extension's sandbox when this run built it), view (building that sandbox:
    /// namespaces, filesystem view, init; absent when an existing one was entered), clone,
    /// sandbox (the child's per-launch steps), exec, launch (clone+sandbox+exec), run
    /// (exec → exit).
    public var phases: [String: Int64]
    /// Notify-action syscalls the extension made, by name.
    public var deniedSyscalls: [DeniedSyscall]
    public var logPath: String
    public var cgroup: String
}

/// `appex run`: one extension from spec to exit, under full governance.
///
/// prepare (container + uid, the extension's sandbox unless one is given, seccomp program,
/// cgroup with limits, log, launch plan) → launch (the C launcher enters the sandbox) → wait on the pidfd (with the OOM watcher and the optional
/// timeout) → collect (status, kill reason, peak memory, denials) → clean up (kill what is
/// left in the cgroup, remove it). `run` does all of it; the pieces are public for the
/// supervisor and the benchmark.
public final class ExtensionRun {
    public let spec: SandboxSpec
    public let options: RunOptions
    public private(set) var container: Container?
    public private(set) var cgroup: ExtensionCgroup?
    public private(set) var plan: LaunchPlan?
    public private(set) var process: LaunchedProcess?
    /// The namespaces and view the extension runs in: given, or built (and closed) by this run.
    public private(set) var sandbox: ExtensionSandbox?
    private let ownsSandbox: Bool
    private var joinFDs: [Int32] = []
    private var log: ExtensionLogFile?
    /// The write end of the log pipe until the launch has handed it to the extension.
    private var logWriteFD: Int32 = -1
    /// With `passOutput`, stderr's own pipe (stdout's is `logWriteFD`); -1 otherwise.
    private var errorWriteFD: Int32 = -1
    private var oomBaseline = 0
    private var oomWatcher: OOMWatcher?
    private var notifier: SeccompNotifier?
    private var prepareNanos: UInt64 = 0
    private var launchedAt: UInt64 = 0
    private var timedOut = false

    /// The extension's end of its socketpair with appexd, handed over at fd 3; -1: none.
    private let channelFD: Int32

    private static let counter = Mutex(0)

    /// `sandbox`: an `ExtensionSandbox` made for this spec to enter (a supervisor keeps one per
    /// extension); nil builds one for this run and closes it afterwards. `channelFD`: the
    /// extension's end of its socketpair with appexd (stays the caller's), placed at fd 3
    /// with `APPEX_SOCKET_FD=3` in the environment (Docs/protocol.md).
    public init(
        spec: SandboxSpec, options: RunOptions = RunOptions(), sandbox: ExtensionSandbox? = nil,
        channelFD: Int32 = -1
    ) {
        self.spec = spec
        self.options = options
        self.sandbox = sandbox
        self.ownsSandbox = sandbox == nil
        self.channelFD = channelFD
    }

    deinit { cleanup() }

    /// Runs the extension to completion and reports; `sandbox` as in `init`.
    public static func run(
        _ spec: SandboxSpec, options: RunOptions = RunOptions(),
        sandbox: ExtensionSandbox? = nil
    ) throws -> RunReport {
        let run = ExtensionRun(spec: spec, options: options, sandbox: sandbox)
        defer { run.cleanup() }
        try run.prepare()
        try run.launch()
        return try run.wait()
    }

    public var store: ContainerStore { ContainerStore(stateRoot: options.stateDirectory, uidRange: options.uidRange) }

    /// Everything before the clone.
    public func prepare() throws {
        let start = MonotonicTime.now
        let store = self.store
        // A sandbox this run builds is built on a second thread (BackgroundStep) while this
        // one plans the container (its uids: one read of the uid table, whose cache then
        // answers the init's uid), makes its directories, compiles the filter and makes the
        // cgroup and the log. That thread waits (Handoff) for the planned container before
        // the view's plan, and for the directories just before the init's clone, whose view
        // mounts them. The step is joined on every way out, so whatever either side made is
        // in `self` for cleanup() when the other fails. The bundle is checked first, here:
        // one that is refused (a hostile RUNPATH, a link out of the bundle) leaves no
        // container, cgroup, log or process behind.
        let bundle = sandbox == nil ? try CheckedBundle.open(spec) : nil
        var building: BackgroundStep<ExtensionSandbox>?
        let containerPlanned = Handoff<Container>()
        let containerMade = Handoff<Void>()
        if let bundle {
            let spec = self.spec, isolateNetwork = options.isolateNetwork, network = options.preparedNetwork
            building = BackgroundStep.start {
                try ExtensionSandbox.create(
                    spec: spec, containerPlanned: containerPlanned.wait,
                    containerMade: containerMade.wait, store: store,
                    isolateNetwork: isolateNetwork, preparedNetwork: network,
                    checkedBundle: bundle)
            }
        }
        defer {
            if let step = building {
                // Never left waiting: a container not planned or not made stands as an error.
                let notMade = SandboxError(
                    "prepare container", path: store.containerPath(for: spec.bundleIdentifier),
                    message: "not made")
                containerPlanned.fail(notMade)
                containerMade.fail(notMade)
                sandbox = try? step.join()
            }
        }
        let container = try store.plan(bundleIdentifier: spec.bundleIdentifier, appGroups: spec.appGroups)
        containerPlanned.deliver(container)
        try store.makeDirectories(for: container)
        self.container = container
        containerMade.deliver(())

        // Always a filter: even a policy that denies nothing gets ENOSYS for syscalls Appex does not know.
        let seccomp = try SeccompCompiler.compile(spec.syscallRules, hostNetwork: spec.hostNetwork)
        let executable = try FilesystemView.executablePath(for: spec)

        let manager = try options.cgroups ?? CgroupManager.detect(parentName: "appex")
        let n = Self.counter.withLock { c -> Int in
            c += 1
            return c
        }
        let name = String(spec.bundleIdentifier.prefix(150)) + "-\(getpid())-\(n)"
        // The soft limit is a line, not a throttle: v1's soft limit only reclaims when the host
        // is short, but v2's memory.high throttles, and with swap off it held an extension
        // below its fatal line until it missed its pings (Docs/decisions/0011). On v2 appexd
        // watches the soft limit itself; memory.high stays at max.
        let high = manager.version == .v1 ? spec.memoryHigh : nil
        let cg = try manager.create(
            name: name,
            limits: CgroupLimits(
                memoryMax: spec.memoryMax, memoryHigh: high, pidsMax: spec.pidsMax, swapOff: true))
        self.cgroup = cg
        joinFDs = try cg.openJoinFDs()
        // The watcher reads the count it starts from; without one, it is read here.
        oomWatcher = try? cg.makeOOMWatcher()
        oomBaseline = try oomWatcher?.baseline ?? cg.oomKillCount()

        let log = try store.openLog(for: spec.bundleIdentifier)
        self.log = log
        log.append(Array("--- appex run \(spec.bundleIdentifier) at \(Self.timestamp()) ---\n".utf8))
        logWriteFD = try log.makePipe(echo: options.passOutput ? 1 : -1)
        if options.passOutput { errorWriteFD = try log.makePipe(echo: 2) }

        var env: [String: String] = [
            "HOME": FilesystemView.dataPath,
            "TMPDIR": FilesystemView.dataPath + "/tmp",
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "APPEX_BUNDLE_IDENTIFIER": spec.bundleIdentifier,
            "APPEX_BUNDLE_PATH": FilesystemView.bundlePath,
            "APPEX_DATA_PATH": FilesystemView.dataPath,
        ]
        for (k, v) in spec.environment { env[k] = v }
        if channelFD >= 0 { env["APPEX_SOCKET_FD"] = "3" }

        var plan = LaunchPlan(
            executable: executable, arguments: [executable] + spec.arguments,
            environment: env.keys.sorted().map { "\($0)=\(env[$0]!)" })
        plan.workingDirectory = FilesystemView.dataPath
        switch cg.join {
        case .procsFiles: plan.cgroupProcsFDs = joinFDs
        case .directory: plan.cgroupDirectoryFD = joinFDs.first ?? -1
        }
        plan.stdin = -1
        plan.stdout = logWriteFD
        plan.stderr = errorWriteFD >= 0 ? errorWriteFD : logWriteFD
        var limits: [LaunchPlan.ResourceLimit] = [.init(resource: Int32(RLIMIT_CORE.rawValue), soft: 0, hard: 0)]
        if let files = spec.openFilesLimit {
            limits.append(.init(resource: Int32(RLIMIT_NOFILE.rawValue), soft: UInt64(files), hard: UInt64(files)))
        }
        if let tasks = spec.pidsMax {
            // Counted per uid (each extension has its own), beside the cgroup's pids.max.
            limits.append(.init(resource: 6 /* RLIMIT_NPROC, not exported to Swift */, soft: UInt64(tasks), hard: UInt64(tasks)))
        }
        plan.resourceLimits = limits
        plan.credentials = .init(
            uid: container.uid, gid: container.gid,
            supplementaryGroups: container.groups.map(\.gid))
        plan.seccomp = seccomp
        plan.noNewPrivileges = true
        plan.channelFD = channelFD
        if let step = building {
            building = nil
            sandbox = try step.join()
        }
        self.plan = plan
        prepareNanos = MonotonicTime.now - start
    }

    /// The clone → exec; stdin is /dev/null inside the view.
    @discardableResult
    public func launch() throws -> LaunchedProcess {
        guard var plan, let sandbox else { throw SandboxError("launch", message: "prepare() first") }
        let devnull = try Sys.open("/dev/null", O_RDONLY)
        defer { Sys.close(devnull) }
        plan.stdin = devnull
        let p = try sandbox.launch(plan)
        launchedAt = MonotonicTime.now
        process = p
        // The child has joined and holds its output pipe; our copies are no longer needed.
        joinFDs.forEach(Sys.close)
        joinFDs = []
        Sys.close(logWriteFD)
        logWriteFD = -1
        Sys.close(errorWriteFD)
        errorWriteFD = -1
        if p.listenerFD >= 0, let seccomp = plan.seccomp {
            let bundle = spec.bundleIdentifier
            var onDenial: (@Sendable (String) -> Void)?
            if let observe = options.onDeniedSyscall { onDenial = { syscall in observe(bundle, syscall) } }
            let n = try SeccompNotifier(
                listenerFD: p.listenerFD, extensionIdentifier: bundle,
                errnos: seccomp.notifyErrnos, onDenial: onDenial)
            notifier = n
            try n.start()
        }
        return p
    }

    /// Waits for the extension to exit (killing it at the timeout) and reports.
    public func wait() throws -> RunReport {
        guard let process else { throw SandboxError("wait", message: "launch() first") }
        let deadline = options.timeout.map { launchedAt + $0.wholeNanoseconds }
        var fds = [pollfd(fd: process.pidfd, events: Int16(POLLIN), revents: 0)]
        if let w = oomWatcher { fds.append(pollfd(fd: w.fd, events: Int16(POLLIN), revents: 0)) }
        while true {
            var timeoutMs: Int32 = -1
            if let deadline {
                let now = MonotonicTime.now
                if now >= deadline {
                    timedOut = true
                    _ = appex_pidfd_send_signal(process.pidfd, SIGKILL)
                    break
                }
                timeoutMs = Int32(min(UInt64(Int32.max), (deadline - now) / 1_000_000 + 1))
            }
            for i in fds.indices { fds[i].revents = 0 }
            let n = poll(&fds, nfds_t(fds.count), timeoutMs)
            if n < 0 && errno != EINTR { throw Sys.fail("poll pidfd") }
            if fds[0].revents != 0 { break }
            if fds.count > 1 && fds[1].revents != 0 {
                // An OOM kill inside the cgroup; the main process's exit follows (or not, if
                // it only hit a child). Re-arm by reading the event.
                _ = try? oomWatcher?.check()
            }
        }
        return try collectExit()
    }

    /// The report of an extension whose pidfd has become readable (it exited): reaps it and
    /// collects status, kill reason, peak memory and denials. For callers that watch the pidfd
    /// themselves (the supervisor's event loop) instead of calling `wait`.
    public func collectExit() throws -> RunReport {
        guard let process, let cgroup, let container else { throw SandboxError("collect exit", message: "launch() first") }
        var code: Int32 = 0, status: Int32 = 0
        if appex_wait_pidfd(process.pidfd, 0, &code, &status) < 0 { throw Sys.fail("waitid pidfd") }
        let exitedAt = MonotonicTime.now
        // A sandbox of this run's own has nothing left to run: its init starts dying now, and
        // its namespaces come down in the kernel while the report is collected (cleanup()
        // reaps it).
        if ownsSandbox { sandbox?.beginClose() }
        let denied = notifier?.stop() ?? []
        // What it wrote before exiting is in the pipe: into the log before the report.
        log?.stop()

        let oomKills = max(0, ((try? cgroup.oomKillCount()) ?? oomBaseline) - oomBaseline)
        let peak = try? cgroup.memoryPeak()
        var exitStatus: Int32?
        var signal: Int32?
        if code == CLD_EXITED { exitStatus = status } else { signal = status }

        var reason: KillReason?
        if timedOut {
            reason = .runTimeout
        } else if let s = signal {
            if s == SIGKILL && oomKills > 0 {
                reason = cgroup.reachedOwnLimit() ? .perProcessLimit : .kernelOOM
            } else if s == SIGSYS {
                reason = .seccompViolation
            } else {
                reason = .crashed
            }
        } else if oomKills > 0 {
            // Exited by itself after the kernel killed one of its processes.
            reason = nil
        }

        var phases = process.phases.microseconds
        phases["prepare"] = Int64(prepareNanos / 1000)
        if ownsSandbox, let sandbox { phases["view"] = Int64(sandbox.buildNanos / 1000) }
        phases["run"] = Int64((exitedAt - launchedAt) / 1000)
        return RunReport(
            bundleIdentifier: spec.bundleIdentifier, pid: process.pid, uid: container.uid,
            exitStatus: exitStatus, signal: signal, killReason: reason,
            peakMemoryBytes: peak, oomKills: oomKills, phases: phases, deniedSyscalls: denied,
            logPath: store.logPath(for: spec.bundleIdentifier), cgroup: cgroup.name)
    }

    /// Kills whatever is left in the cgroup, removes it, ends the sandbox this run built,
    /// closes descriptors. Idempotent.
    public func cleanup() {
        if let process, process.pidfd >= 0 {
            // Killed and reaped before the sandbox closes: its init, exiting, waits for every
            // process of its pid namespace to be reaped, and only we can reap this one.
            _ = appex_pidfd_send_signal(process.pidfd, SIGKILL)
            var code: Int32 = 0, status: Int32 = 0
            _ = appex_wait_pidfd(process.pidfd, 0, &code, &status)
            Sys.close(process.pidfd)
            self.process?.pidfd = -1
        }
        // A sandbox of this run's own ends with it: its init starts dying now (unless
        // collectExit began that already), and the kernel takes its namespaces down while the
        // rest is cleaned up.
        if ownsSandbox { sandbox?.beginClose() }
        notifier?.stop()
        notifier = nil
        oomWatcher?.cancel()
        oomWatcher = nil
        if let cgroup {
            try? cgroup.killAll()
            try? cgroup.remove()
            self.cgroup = nil
        }
        if ownsSandbox {
            sandbox?.close()
            sandbox = nil
        }
        joinFDs.forEach(Sys.close)
        joinFDs = []
        log?.stop()
        log = nil
        Sys.close(logWriteFD)
        logWriteFD = -1
        Sys.close(errorWriteFD)
        errorWriteFD = -1
    }

    static func timestamp() -> String {
        var t = time(nil)
        var tmv = tm()
        gmtime_r(&t, &tmv)
        var buf = [CChar](repeating: 0, count: 32)
        _ = strftime(&buf, buf.count, "%Y-%m-%dT%H:%M:%SZ", &tmv)
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
