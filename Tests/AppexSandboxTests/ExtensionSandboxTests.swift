import AppexCgroups
import AppexPolicy
import AppexTestSupport
import CAppexLinux
import Foundation
import Testing

@testable import AppexSandbox
@testable import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

/// One extension's sandbox (namespaces + view + init) entered by several launches.
@Suite(.serialized, .requiresRoot("the sandbox needs root"))
struct ExtensionSandboxTests {
    /// A sandbox for the probe of `r`, built the way ExtensionRun builds one.
    func makeSandbox(_ r: ProbeRun) throws -> ExtensionSandbox {
        let store = ContainerStore(stateRoot: r.state)
        let container = try store.prepare(bundleIdentifier: r.id)
        return try ExtensionSandbox.create(spec: r.spec([]), container: container, store: store)
    }

    func run(_ r: ProbeRun, in sandbox: ExtensionSandbox, _ args: [String]) throws -> (RunReport, String) {
        let report = try ExtensionRun.run(r.spec(args), options: r.options(), sandbox: sandbox)
        #expect(try !Fixture.cgroups().list().contains(report.cgroup), "cgroup \(report.cgroup) left behind")
        return (report, r.lastLine())
    }

    /// `beginClose` starts the init's end without waiting for it; `close` then reaps it, and a
    /// launch into the closing sandbox is refused.
    @Test func beginCloseEndsTheInitWithoutWaiting() throws {
        let r = try ProbeRun("begin-close")
        let sandbox = try makeSandbox(r)
        defer { sandbox.close() }
        #expect(sandbox.isAlive)
        let pidfd = sandbox.pidfd
        sandbox.beginClose()
        // The init dies on its own: its pidfd becomes readable (bounded wait, not a timing claim).
        var p = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&p, 1, 10_000) == 1, "the init outlived SIGKILL for 10 s")
        #expect(!sandbox.isAlive)
        #expect(throws: (any Error).self) { try ExtensionRun.run(r.spec(["pid"]), options: r.options(), sandbox: sandbox) }
        sandbox.close()
        #expect(sandbox.pidfd == -1)
    }

    /// The network namespace an `appex run` makes ahead (`PreparedNetworkNamespace`) is the
    /// one the sandbox's init holds: not the host's, only a loopback in it, and given to that
    /// sandbox alone. A second sandbox gets a namespace of its own.
    @Test func aPreparedNetworkNamespaceIsTheSandboxsAlone() throws {
        let r = try ProbeRun("prepared-netns")
        let store = ContainerStore(stateRoot: r.state)
        let container = try store.prepare(bundleIdentifier: r.id)
        let prepared = PreparedNetworkNamespace.start(), second = PreparedNetworkNamespace.start()
        let sandbox = try ExtensionSandbox.create(spec: r.spec([]), container: container, store: store, preparedNetwork: prepared)
        defer { sandbox.close() }
        let other = try ExtensionSandbox.create(spec: r.spec([]), container: container, store: store, preparedNetwork: second)
        defer { other.close() }
        #expect(prepared.take() == nil && second.take() == nil, "each was taken by its sandbox")
        let ours = try Self.networkNamespace(of: "self")
        let its = try Self.networkNamespace(of: "\(sandbox.initPID)")
        let theOthers = try Self.networkNamespace(of: "\(other.initPID)")
        #expect(its != ours && its != theOthers)
        let devices = try String(contentsOfFile: "/proc/\(sandbox.initPID)/net/dev", encoding: .utf8)
            .split(separator: "\n").dropFirst(2).map { $0.split(separator: ":")[0].trimmingCharacters(in: .whitespaces) }
        #expect(devices == ["lo"])
        // What runs in the sandbox is in it too, and without the host network its filter
        // refuses inet sockets before the namespace is ever asked (issue 30, #9).
        let (_, line) = try run(r, in: sandbox, ["connect", "9"])
        #expect(line == "errno=EAFNOSUPPORT at=socket", "\(line)")
    }

    /// A sandbox on the host network does not take the prepared namespace; it stays with its
    /// owner, who closes it.
    @Test func aHostNetworkSandboxLeavesThePreparedNamespace() throws {
        let r = try ProbeRun("host-netns")
        let store = ContainerStore(stateRoot: r.state)
        let container = try store.prepare(bundleIdentifier: r.id)
        let prepared = PreparedNetworkNamespace.start()
        var spec = r.spec([])
        spec.hostNetwork = true
        let sandbox = try ExtensionSandbox.create(spec: spec, container: container, store: store, preparedNetwork: prepared)
        defer { sandbox.close() }
        let ours = try Self.networkNamespace(of: "self")
        #expect(try Self.networkNamespace(of: "\(sandbox.initPID)") == ours)
        let fd = try #require(prepared.take(), "still the caller's")
        #expect(prepared.take() == nil, "taken once")
        Sys.close(fd)
    }

    /// With the host network the filter lets inet and netlink sockets be made, and still no
    /// family that ignores network namespaces (AF_VSOCK) or needs none (AF_PACKET) (issue 30, #9).
    @Test func withTheHostNetworkInetSocketsWorkAndVsockStillDoesNot() throws {
        let r = try ProbeRun("host-net-families")
        let store = ContainerStore(stateRoot: r.state)
        let container = try store.prepare(bundleIdentifier: r.id)
        var base = r.spec([])
        base.hostNetwork = true
        let sandbox = try ExtensionSandbox.create(spec: base, container: container, store: store)
        defer { sandbox.close() }
        for (action, expected) in [
            ("socket-unix", "ok"), ("socket-inet", "ok"), ("socket-netlink", "ok"),
            ("socket-vsock", "errno=EAFNOSUPPORT"), ("socket-packet", "errno=EAFNOSUPPORT"),
        ] {
            var spec = r.spec([action])
            spec.hostNetwork = true
            let report = try ExtensionRun.run(spec, options: r.options(), sandbox: sandbox)
            #expect(try !Fixture.cgroups().list().contains(report.cgroup), "cgroup \(report.cgroup) left behind")
            #expect(r.lastLine() == expected, "\(action)")
        }
    }

    /// The maker's namespace is a new one, not the caller's, and the caller's thread is back
    /// in its own; it is taken once.
    @Test func aPreparedNamespaceIsANewOneTakenOnce() throws {
        let prepared = PreparedNetworkNamespace.start()
        let fd = try #require(prepared.take())
        defer { Sys.close(fd) }
        var made = stat(), ours = stat()
        #expect(fstat(fd, &made) == 0 && stat("/proc/thread-self/ns/net", &ours) == 0)
        #expect(made.st_ino != ours.st_ino, "the caller's own namespace")
        #expect(prepared.take() == nil)
    }

    static func networkNamespace(of pid: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let n = readlink("/proc/\(pid)/ns/net", &buffer, 63)
        try #require(n > 0)
        return String(cString: buffer)
    }

    @Test func launchesEnterOneSandboxEachWithItsOwnCgroup() throws {
        let r = try ProbeRun("shared")
        let sandbox = try makeSandbox(r)
        defer { sandbox.close() }
        let (first, pid1) = try run(r, in: sandbox, ["pid"])
        let (second, pid2) = try run(r, in: sandbox, ["pid"])
        // Both in the sandbox's pid namespace after its init (pid 1).
        #expect(pid1 == "ok pid=2")
        #expect(pid2 == "ok pid=3")
        #expect(first.cgroup != second.cgroup)
        #expect(first.phases["view"] == nil, "the view was rebuilt")
        // The view is the sandbox's: /tmp written by one launch is there for the next.
        #expect(try run(r, in: sandbox, ["write", "/tmp/appex-shared"]).1 == "ok")
        #expect(try run(r, in: sandbox, ["exists", "/tmp/appex-shared"]).1 == "ok")
        // Still only its view, its uid, its limits.
        #expect(try run(r, in: sandbox, ["exists", "/root"]).1 == "errno=ENOENT")
        #expect(try run(r, in: sandbox, ["write", "/usr/appex-probe-test"]).1 == "errno=EROFS")
        let (uidReport, uid) = try run(r, in: sandbox, ["getuid"])
        #expect(uid == "ok uid=\(uidReport.uid) gid=\(uidReport.uid) groups=0")
        #expect(sandbox.isAlive)
    }

    @Test func theInitIsUnprivilegedAndInvisible() throws {
        let r = try ProbeRun("init")
        let sandbox = try makeSandbox(r)
        defer { sandbox.close() }
        let status = try String(contentsOfFile: "/proc/\(sandbox.initPID)/status", encoding: .utf8)
        let fields = Dictionary(
            uniqueKeysWithValues: status.split(separator: "\n").compactMap { line -> (String, String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            })
        #expect(fields["Uid"]?.split(separator: "\t").first == "\(sandbox.initUID)")
        #expect(UIDAllocator.defaultRange.contains(sandbox.initUID))
        #expect(sandbox.initUID != (try ContainerStore(stateRoot: r.state).uids.uid(for: r.id)))
        // No capability can come back through an exec: bounding and ambient sets are empty.
        #expect(fields["CapBnd"] == "0000000000000000")
        #expect(fields["CapAmb"] == "0000000000000000")
        #expect(fields["NoNewPrivs"] == "1")
        #expect(fields["CapEff"] == "0000000000000000")
        #expect(fields["NSpid"]?.split(separator: "\t").last == "1")
        #expect(try run(r, in: sandbox, ["exists", "/proc/1"]).1 == "errno=ENOENT")
    }

    @Test func closingTheSandboxEndsWhatRunsInIt() throws {
        let r = try ProbeRun("close")
        let sandbox = try makeSandbox(r)
        let run = ExtensionRun(spec: r.spec(["sleep", "30"]), options: try r.options(), sandbox: sandbox)
        try run.prepare()
        let p = try run.launch()
        let initPID = sandbox.initPID
        sandbox.close()
        #expect(kill(p.pid, 0) == -1 && errno == ESRCH, "the extension outlived its sandbox")
        #expect(kill(initPID, 0) == -1 && errno == ESRCH, "the init is still there")
        #expect(!sandbox.isAlive)
        run.cleanup()
        Fixture.removeParentCgroups()
    }

    @Test func theInitReapsOrphans() throws {
        let r = try ProbeRun("orphan")
        // The bundle's executable is the host's shell here: it leaves a child behind and exits.
        let shell = URL(fileURLWithPath: "/bin/sh").resolvingSymlinksInPath().path
        try FileManager.default.removeItem(atPath: r.exe)
        try FileManager.default.copyItem(atPath: shell, toPath: r.exe)
        chmod(r.exe, 0o755)
        let sandbox = try makeSandbox(r)
        defer { sandbox.close() }
        let run = ExtensionRun(
            spec: r.spec(["-c", "/usr/bin/sleep 30 & exit 0"]), options: try r.options(),
            sandbox: sandbox)
        defer {
            run.cleanup()
            Fixture.removeParentCgroups()
        }
        try run.prepare()
        try run.launch()
        #expect(try run.wait().exitStatus == 0)
        // The shell has exited, so its child now belongs to the init.
        let orphans = children(of: sandbox.initPID)
        #expect(orphans.count == 1)
        // Killed, it stays a zombie unless the init reaps it.
        for pid in orphans {
            #expect(kill(pid, SIGKILL) == 0)
            #expect(waitUntilGone(pid), "pid \(pid) was not reaped by the sandbox init")
        }
        #expect(children(of: sandbox.initPID).isEmpty)
        #expect(sandbox.isAlive)
    }

    /// The children of a single-threaded process, zombies included (host pids).
    func children(of pid: Int32) -> [Int32] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Whether `pid` is gone (a zombie still answers kill 0); gives up after 10 s.
    func waitUntilGone(_ pid: Int32) -> Bool {
        for _ in 0..<1000 {
            if kill(pid, 0) == -1 && errno == ESRCH { return true }
            usleep(10_000)
        }
        return false
    }

    @Test func aSandboxWhoseInitDiedIsAClearError() throws {
        let r = try ProbeRun("dead")
        let sandbox = try makeSandbox(r)
        defer { sandbox.close() }
        #expect(appex_pidfd_send_signal(sandbox.pidfd, SIGKILL) == 0)
        var fds = [pollfd(fd: sandbox.pidfd, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&fds, 1, 5000) == 1)
        #expect(!sandbox.isAlive)
        let plan = LaunchPlan(executable: "/var/appex/bundle/probe", arguments: ["probe", "pid"], environment: [])
        #expect {
            _ = try sandbox.launch(plan)
        } throws: { e in
            (e as? LaunchError)?.what.hasSuffix("(the sandbox init has exited)") == true
        }
    }
}

/// Finding the init, and a clear error when it is not there.
@Suite struct SandboxInitLocatorTests {
    @Test func theBuiltInitIsFound() throws {
        let path = try SandboxInitLocator.path()
        #expect(path.hasSuffix("/appex-sandbox-init"))
        #expect(access(path, X_OK) == 0)
    }

    /// Beside the running executable, then an installed layout's libexec, then the checkout's
    /// build directories; each computed from canonical paths by dropping components.
    @Test func candidatesAreBesideTheExecutableThenLibexecThenTheCheckout() throws {
        #expect(PolicyLocator.directoryOf("/a/b/c") == "/a/b")
        #expect(PolicyLocator.directoryOf("/a") == "/")
        #expect(PolicyLocator.directoryOf("/") == "/")
        let exe = try #require(realpath("/proc/self/exe", nil))
        let directory = (String(cString: exe) as NSString).deletingLastPathComponent
        free(exe)
        let list = SandboxInitLocator.candidates()
        let beside = directory + "/appex-sandbox-init"
        let libexec = ((directory as NSString).deletingLastPathComponent as NSString).appendingPathComponent("libexec/appex/appex-sandbox-init")
        let besideAt = try #require(list.firstIndex(of: beside), "\(list)")
        let libexecAt = try #require(list.firstIndex(of: libexec), "\(list)")
        #expect(besideAt < libexecAt)
        let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        #expect(FileManager.default.fileExists(atPath: checkout + "/Package.swift"))
        #expect(Array(list.suffix(2)) == [checkout + "/.build/release/appex-sandbox-init", checkout + "/.build/debug/appex-sandbox-init"])
    }

    @Test(.requiresRoot("needs root"))
    func aMissingInitIsNamed() throws {
        let r = try ProbeRun("noinit")
        let store = ContainerStore(stateRoot: r.state)
        let container = try store.prepare(bundleIdentifier: r.id)
        #expect {
            _ = try ExtensionSandbox.create(
                spec: r.spec([]), container: container, store: store,
                initExecutable: "/nonexistent/appex-sandbox-init")
        } throws: { e in
            let s = String(describing: e)
            return s.contains("ENOENT") && s.contains("/nonexistent/appex-sandbox-init")
        }
    }
}
