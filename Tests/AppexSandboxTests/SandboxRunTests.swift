import AppexCgroups
import AppexTestSupport
import CAppexLinux
import Foundation
import Testing

@testable import AppexSandbox
@testable import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

/// Real kernel, as root: each test launches the probe in a full sandbox and asserts what the
/// kernel allowed. Serialized: they share the machine's memory and the test cgroup parent.
@Suite(.serialized, .requiresRoot("the sandbox needs root"))
struct SandboxRunTests {
    @Test func allowedSyscallWorks() throws {
        let r = try ProbeRun("allowed")
        let (report, out) = try r.run(["uname"], rules: [SeccompRule("ptrace", .errno(EPERM))])
        #expect(report.exitStatus == 0)
        #expect(report.killReason == nil)
        #expect(out == "ok")
        #expect(report.phases["launch"] != nil && report.phases["sandbox"] != nil)
    }

    /// The launcher pins its thread to its CPU for the clone so the child starts there
    /// (cpu_handoff in launcher.c): the extension must still get every CPU its launcher had,
    /// and the launching thread its own set back.
    @Test func theExtensionAndTheLauncherKeepEveryCPU() throws {
        func allowed(_ path: String) throws -> String {
            let status = try String(contentsOfFile: path, encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") })
            return line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces)
        }
        let before = try allowed("/proc/thread-self/status")
        let r = try ProbeRun("cpus")
        let (report, out) = try r.run(["cpus"])
        #expect(report.exitStatus == 0)
        #expect(out == "ok \(before)")
        #expect(try allowed("/proc/thread-self/status") == before)
    }

    @Test func deniedSyscallReturnsEPERM() throws {
        let r = try ProbeRun("errno")
        // Control: without the rule the kernel answers ESRCH (no such pid).
        let (_, open) = try r.run(["ptrace-nonexistent"])
        #expect(open == "errno=ESRCH")
        let (report, out) = try r.run(["ptrace-nonexistent"], rules: [SeccompRule("ptrace", .errno(EPERM))])
        #expect(out == "errno=EPERM")
        #expect(report.exitStatus == 0)
    }

    @Test func killActionDiesWithSIGSYS() throws {
        let r = try ProbeRun("kill")
        let (report, _) = try r.run(["ptrace-nonexistent"], rules: [SeccompRule("ptrace", .kill)])
        #expect(report.signal == SIGSYS)
        #expect(report.exitStatus == nil)
        #expect(report.killReason == "seccomp-violation")
    }

    @Test func notifyActionIsReportedByName() throws {
        let r = try ProbeRun("notify")
        let (report, out) = try r.run(
            ["keyctl-invalid"],
            rules: [
                SeccompRule("keyctl", .notify(errno: EPERM)), SeccompRule("sendmsg", .notify(errno: EPERM)),
            ])
        #expect(out == "errno=EPERM")
        #expect(report.deniedSyscalls == [DeniedSyscall(syscall: "keyctl", count: 1)])
        #expect(report.exitStatus == 0)
    }

    @Test func logActionAllows() throws {
        let r = try ProbeRun("log")
        let (_, out) = try r.run(["ptrace-nonexistent"], rules: [SeccompRule("ptrace", .log)])
        #expect(out == "errno=ESRCH")
    }

    @Test func overTheHardLimitIsKilledAsPerProcessLimit() throws {
        let r = try ProbeRun("oom")
        let (report, _) = try r.run(["alloc", "256"], memoryMax: 32 << 20)
        #expect(report.signal == SIGKILL)
        #expect(report.killReason == "per-process-limit")
        #expect(report.oomKills >= 1)
        #expect((report.peakMemoryBytes ?? 0) > 16 << 20)
    }

    @Test func underTheLimitRunsToTheEnd() throws {
        let r = try ProbeRun("fits")
        let (report, out) = try r.run(["alloc", "8"], memoryMax: 64 << 20)
        #expect(report.exitStatus == 0)
        #expect(out == "ok allocated=8")
    }

    @Test func cannotExceedItsPidsLimit() throws {
        let r = try ProbeRun("pids")
        let (report, out) = try r.run(["fork-bomb", "40"], pids: 8)
        #expect(report.exitStatus == 0)
        #expect(out.hasPrefix("errno=EAGAIN forked="))
        let forked = Int(out.split(separator: "=").last ?? "") ?? 99
        #expect(forked < 8)
    }

    @Test func cannotRaiseItsLimits() throws {
        let r = try ProbeRun("rlimit")
        let (_, out) = try r.run(["setrlimit-raise"])
        #expect(out == "errno=EPERM")
    }

    @Test func runsAsItsOwnUnprivilegedUid() throws {
        let a = try ProbeRun("uid-a")
        let b = try ProbeRun("uid-b", state: a.state)
        let (ra, outA) = try a.run(["getuid"])
        let (rb, outB) = try b.run(["getuid"])
        #expect(outA == "ok uid=\(ra.uid) gid=\(ra.uid) groups=0")
        #expect(outB == "ok uid=\(rb.uid) gid=\(rb.uid) groups=0")
        #expect(ra.uid != rb.uid && ra.uid != 0 && rb.uid != 0)
        // Same bundle, same uid next time.
        let (again, _) = try a.run(["getuid"])
        #expect(again.uid == ra.uid)
    }

    @Test func ownNamespaces() throws {
        let r = try ProbeRun("ns")
        // pid 1 is the sandbox init; the extension is the first process after it.
        #expect(try r.run(["pid"]).1 == "ok pid=2")
        // hidepid=invisible: the init (another uid) is not visible in its /proc.
        #expect(try r.run(["exists", "/proc/1"]).1 == "errno=ENOENT")
        #expect(try r.run(["exists", "/proc/2"]).1 == "ok")
        #expect(try r.run(["hostname"]).1 == "ok appex")
        #expect(try r.run(["env", "HOME"]).1 == "ok /var/appex/data")
        #expect(try r.run(["env", "TMPDIR"]).1 == "ok /var/appex/data/tmp")
    }

    @Test func seesOnlyItsView() throws {
        let r = try ProbeRun("view")
        for hidden in ["/root", "/work", "/home", "/etc/passwd", "/sys", "/var/lib", r.state, "/proc/1/root/root"] {
            #expect(try r.run(["exists", hidden]).1 == "errno=ENOENT", "\(hidden) is visible")
        }
        let (_, root) = try r.run(["ls", "/"])
        let entries = Set(root.split(separator: " ").dropFirst().map(String.init))
        #expect(entries.isSubset(of: ["usr", "lib", "lib64", "bin", "sbin", "etc", "var", "tmp", "dev", "proc", "opt"]))
        #expect(try r.run(["exists", "/var/appex/bundle/probe"]).1 == "ok")
        #expect(try r.run(["read", "/dev/null"]).1 == "ok ")
    }

    @Test func cannotWriteItsBundleOrTheSystem() throws {
        let r = try ProbeRun("ro")
        #expect(try r.run(["write", "/var/appex/bundle/probe"]).1 == "errno=EROFS")
        #expect(try r.run(["write", "/var/appex/bundle/new"]).1 == "errno=EROFS")
        #expect(try r.run(["write", "/usr/appex-probe-test"]).1 == "errno=EROFS")
        #expect(try r.run(["write", "/newfile"]).1 == "errno=EROFS")
        #expect(try r.run(["write", "/tmp/scratch"]).1 == "ok")
    }

    /// `prepare` builds the sandbox on a second thread while it makes the cgroup: when the
    /// cgroup fails, the sandbox built beside it is still handed to the run, and cleanup ends
    /// its init (no process of the init's uid is left).
    @Test func aFailureBesideTheSandboxBuildLeavesNoInit() throws {
        let r = try ProbeRun("beside")
        var options = try r.options()
        options.cgroups = try CgroupManager(
            version: .v2, roots: .v2("/nonexistent-appex-test-\(getpid())"),
            parentName: "appex")
        let run = ExtensionRun(spec: r.spec(["exit", "0"]), options: options)
        #expect(throws: CgroupError.self) { try run.prepare() }
        let sandbox = try #require(run.sandbox, "the sandbox built beside the failure is the run's to close")
        #expect(sandbox.isAlive)
        let uid = sandbox.initUID
        #expect(Self.processes(ownedBy: uid) > 0)
        run.cleanup()
        #expect(run.sandbox == nil)
        #expect(Self.processes(ownedBy: uid) == 0, "the init of uid \(uid) outlived the run")
        #expect(run.cgroup == nil)
    }

    static func processes(ownedBy uid: UInt32) -> Int {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { $0.allSatisfy(\.isNumber) } ?? []
        return pids.filter { pid in
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") })
            else { return false }
            return line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first == Substring(String(uid))
        }.count
    }

    /// The child joins its cgroup through v1 `tasks` ("0": the writing thread, the child's only
    /// one, so the whole process): each hierarchy lists it at the extension's cgroup, and the
    /// cgroup holds exactly it (threads it starts later inherit their creator's cgroups).
    @Test func theWholeProcessIsInItsCgroups() throws {
        let r = try ProbeRun("member")
        let run = ExtensionRun(spec: r.spec(["sleep", "5"]), options: try r.options())
        defer { run.cleanup() }
        try run.prepare()
        let process = try run.launch()
        let cg = try #require(run.cgroup)
        let lines = try String(contentsOfFile: "/proc/\(process.pid)/cgroup", encoding: .utf8).split(separator: "\n")
        // Each hierarchy the cgroup spans (v1: memory, pids; v2: the one unified line, `0::`)
        // lists the process at the cgroup's path.
        for dir in cg.paths {
            let controller = cg.version == .v2 ? "0::" : dir.contains("/memory/") ? ":memory:" : ":pids:"
            let line = try #require(
                lines.first { cg.version == .v2 ? $0.hasPrefix(controller) : $0.contains(controller) },
                "no \(controller) line")
            #expect(dir.hasSuffix(String(line.split(separator: ":").last ?? "")), "\(line) vs \(dir)")
        }
        #expect(try cg.pids() == [process.pid])
        kill(process.pid, SIGKILL)
        _ = try run.wait()
    }

    @Test func dataPersistsAcrossLaunches() throws {
        let r = try ProbeRun("persist")
        #expect(try r.run(["write", "/var/appex/data/Documents/note", "hello-\(r.id)"]).1 == "ok")
        #expect(try r.run(["read", "/var/appex/data/Documents/note"]).1 == "ok hello-\(r.id)")
        // /tmp is private to each launch.
        #expect(try r.run(["write", "/tmp/x"]).1 == "ok")
        #expect(try r.run(["exists", "/tmp/x"]).1 == "errno=ENOENT")
    }

    @Test func cannotReadAnotherExtensionsContainer() throws {
        let a = try ProbeRun("other-a")
        let b = try ProbeRun("other-b", state: a.state)
        #expect(try a.run(["write", "/var/appex/data/Documents/secret", "s3cret"]).1 == "ok")
        let hostPath = ContainerStore(stateRoot: a.state).containerPath(for: a.id) + "/Documents/secret"
        // Not in b's view at all...
        #expect(try b.run(["read", hostPath]).1 == "errno=ENOENT")
        #expect(try b.run(["read", "/var/appex/data/Documents/secret"]).1 == "errno=ENOENT")
        // ...and its own uid could not open it even if it were.
        var st = stat()
        #expect(lstat(ContainerStore(stateRoot: a.state).containerPath(for: a.id), &st) == 0)
        #expect(st.st_mode & 0o077 == 0)
    }

    @Test func setupFailureNamesTheStepAndErrno() throws {
        let r = try ProbeRun("setupfail")
        let store = ContainerStore(stateRoot: r.state)
        let container = try store.prepare(bundleIdentifier: r.id)
        // The data directory disappears before the sandbox is built: its mount fails.
        try ContainerStore.removeTree(container.path)
        do {
            let sandbox = try ExtensionSandbox.create(spec: r.spec(["uname"]), container: container, store: store)
            sandbox.close()
            Issue.record("the sandbox was built without a data directory")
        } catch let e as LaunchError {
            #expect(e.what == "mount data dir")
            #expect(e.errno == .noSuchFileOrDirectory)
            #expect(e.description.hasPrefix("mount data dir: ENOENT ("))
        }
        let mountinfo = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        #expect(!mountinfo.contains(r.state))
    }

    @Test func execFailureIsReported() throws {
        let r = try ProbeRun("noexec")
        chmod(r.exe, 0o644)
        #expect {
            _ = try ExtensionRun.run(r.spec(["uname"]), options: r.options())
        } throws: { e in
            (e as? LaunchError)?.stepName == "execve" && (e as? LaunchError)?.errno == .permissionDenied
        }
        #expect(try Fixture.cgroups().list().filter { $0.hasPrefix(r.id) }.isEmpty)
        Fixture.removeParentCgroups()
    }

    @Test func timeoutKills() throws {
        let r = try ProbeRun("timeout")
        let (report, _) = try r.run(["sleep", "30"], timeout: .milliseconds(200))
        #expect(report.killReason == "run-timeout")
        #expect(report.signal == SIGKILL)
    }

    @Test func balloonExampleIsStoppedAtItsLimit() throws {
        let dir = try ScratchDirectory.make("sbx-balloon", mode: 0o755)
        defer { try? ContainerStore.removeTree(dir) }
        #expect(FileManager.default.isExecutableFile(atPath: Fixture.balloon), "build AppexExampleBalloon first")
        let (bundle, exe) = try Fixture.makeBundle(in: dir, name: "Balloon.appex", executable: Fixture.balloon)
        let state = try ScratchDirectory.make("sbx-balloon-state", mode: 0o755)
        defer { try? ContainerStore.removeTree(state) }
        let spec = SandboxSpec(
            bundleIdentifier: Fixture.uniqueID("balloon"), bundlePath: bundle, executablePath: exe,
            arguments: ["4", "512"], memoryMax: 64 << 20, pidsMax: 32)
        let report = try ExtensionRun.run(spec, options: RunOptions(stateDirectory: state, cgroups: try Fixture.cgroups()))
        #expect(report.killReason == "per-process-limit")
        let log = try String(contentsOfFile: report.logPath, encoding: .utf8)
        #expect(log.contains("balloon: 8 MiB"))
        #expect(!log.contains("without being stopped"))
        Fixture.removeParentCgroups()
    }
}

/// The launcher alone: the v2 path (clone3 + CLONE_INTO_CGROUP) where a cgroup2 hierarchy is mounted.
@Suite(.serialized, .requiresRoot("needs root"))
struct LauncherTests {
    @Test func cloneIntoCgroupOnTheUnifiedHierarchy() throws {
        let probe = try CgroupManager.probe()
        try #require(probe.unifiedMount != nil, "no cgroup2 hierarchy mounted")
        let dir = probe.unifiedMount! + "/appex-tests-clone3-\(getpid())"
        #expect(mkdir(dir, 0o755) == 0)
        defer { rmdir(dir) }
        let dirFD = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC)
        defer { close(dirFD) }
        var plan = LaunchPlan(executable: Fixture.probe, arguments: ["appex-probe", "cgroup2"], environment: [])
        plan.namespaces = []
        plan.cgroupDirectoryFD = dirFD
        plan.noNewPrivileges = false
        let (status, out) = try Self.launchCapturingStdout(plan)
        #expect(out == "ok /appex-tests-clone3-\(getpid())\n")
        #expect(status == 0)
    }

    /// Launches `plan` with its stdout on a pipe (the write end moved to a descriptor number
    /// of at least `stdoutAtLeast` when given), waits for it, and returns its exit status and
    /// everything it wrote.
    static func launchCapturingStdout(_ plan: LaunchPlan, stdoutAtLeast: Int32? = nil) throws -> (status: Int32, output: String) {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        if let stdoutAtLeast {
            let moved = fcntl(fds[1], F_DUPFD_CLOEXEC, stdoutAtLeast)
            try #require(moved >= stdoutAtLeast)
            close(fds[1])
            fds[1] = moved
        }
        var plan = plan
        plan.stdout = fds[1]
        let p = try Launcher.launch(plan)
        close(fds[1])
        var code: Int32 = 0, status: Int32 = 0
        _ = appexWait(p.pidfd, &code, &status)
        close(p.pidfd)
        let out = String(decoding: try readAll(fds[0]), as: UTF8.self)
        close(fds[0])
        return (status, out)
    }

    @Test func phasesAreTimestamped() throws {
        var plan = LaunchPlan(executable: Fixture.probe, arguments: ["appex-probe", "uname"], environment: [])
        plan.stdout = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(plan.stdout) }
        let p = try Launcher.launch(plan)
        var code: Int32 = 0, status: Int32 = 0
        _ = appexWait(p.pidfd, &code, &status)
        close(p.pidfd)
        #expect(p.phases.cloneNanos > 0 && p.phases.sandboxNanos > 0 && p.phases.execNanos > 0)
        #expect(status == 0)
    }

    /// With descriptor slots reserved (appexd reserves them first thing), a child starts from
    /// a small descriptor table however many descriptors the parent holds: its stdout, staged
    /// through a slot, works; its table is a few dozen entries, not thousands; the slots come
    /// back after each launch.
    @Test func childrenGetASmallDescriptorTableThroughSlots() throws {
        #expect(Launcher.reserveDescriptorSlots() > 0)
        var extra: [Int32] = []
        for _ in 0..<3000 { extra.append(open("/dev/null", O_RDONLY | O_CLOEXEC)) }
        defer { extra.forEach { close($0) } }
        for round in 0..<100 {
            var plan = LaunchPlan(
                executable: "/bin/sh", arguments: ["sh", "-c", "grep FDSize /proc/$$/status; echo ok"],
                environment: [])
            plan.namespaces = []
            plan.noNewPrivileges = false
            // Numbered far above the slots (and every other descriptor): it must be staged.
            let (status, out) = try Self.launchCapturingStdout(plan, stdoutAtLeast: 5000)
            #expect(status == 0)
            let lines = out.split(separator: "\n")
            let size = Int(lines.first?.split(separator: "\t").last ?? "") ?? -1
            // The shell itself (its pid, $$), not a process it forks: the launch's own table.
            #expect(size > 0 && size <= 1024, "round \(round): FDSize \(size): the child copied the parent's table (\(out))")
            #expect(lines.last == "ok", "round \(round): \(out)")
            if size <= 0 || size > 1024 { break }
        }
    }

    /// The sandbox is built on a second thread while the container's directories are made;
    /// when making them fails (a link the extension planted in its container), the build
    /// stops before the init's clone: no init, no cgroup, no log pipe left behind.
    @Test func aContainerThatCannotBeMadeStopsTheSandboxBuildBeforeItsInit() throws {
        let r = try ProbeRun("planted")
        let (first, _) = try r.run(["uname"])
        #expect(first.exitStatus == 0)
        let container = r.state + "/containers/" + r.id
        let outside = r.state + "/outside"
        #expect(mkdir(outside, 0o755) == 0)
        #expect(rename(container + "/Library", container + "/Library.old") == 0)
        #expect(symlink(outside, container + "/Library") == 0)

        let run = ExtensionRun(spec: r.spec(["uname"]), options: try r.options())
        #expect {
            try run.prepare()
        } throws: { e in
            "\(e)".contains("Library")
        }
        #expect(run.sandbox == nil, "the sandbox's init was launched for a container that was not made")
        #expect(run.cgroup == nil)
        run.cleanup()
        var st = stat()
        #expect(stat(outside, &st) == 0 && st.st_uid == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
        Fixture.removeParentCgroups()
    }

    @Test func missingExecutableIsENOENT() throws {
        let plan = LaunchPlan(executable: "/nonexistent/appex-probe", arguments: ["x"], environment: [])
        #expect {
            _ = try Launcher.launch(plan)
        } throws: { e in
            (e as? LaunchError)?.errno == .noSuchFileOrDirectory && (e as? LaunchError)?.stepName == "execve"
        }
    }
}

func appexWait(_ pidfd: Int32, _ code: inout Int32, _ status: inout Int32) -> Int32 {
    appex_wait_pidfd(pidfd, 0, &code, &status)
}

func readAll(_ fd: Int32) throws -> [UInt8] { try Sys.readAll(fd: fd) }
