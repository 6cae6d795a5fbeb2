import AppexCgroups
import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 12, item 2: the probe's attempts through the real `appex run`, as root, under the
/// shipped share-services policy. Each attempt is harmless if it were not stopped (the probe's
/// arguments are ones the kernel rejects; ProbeCallTests shows the kernel's own answers).
@Suite(.serialized, .requiresRoot("appex run needs root"))
struct ProbeCLITests {
    static let probe = RunCLITests.probe

    enum Outcome: Sendable, CustomStringConvertible {
        /// The probe's line, exactly.
        case line(String)
        /// The probe's line starts with this.
        case prefix(String)
        /// Killed by the filter: SIGSYS, kill reason seccomp-violation.
        case killed
        var description: String {
            switch self {
            case .line(let s): s
            case .prefix(let s): s + "…"
            case .killed: "killed"
            }
        }
    }

    static let cases: [([String], Outcome)] = {
        var list: [([String], Outcome)] = [
            // Denied with the policy's errno.
            (["ptrace"], .line("errno=EPERM")),
            (["process_vm_readv"], .line("errno=EPERM")),
            (["mount"], .line("errno=EPERM")),
            (["umount2"], .line("errno=EPERM")),
            (["pivot_root"], .line("errno=EPERM")),
            (["fsopen"], .line("errno=EPERM")),
            (["open_tree"], .line("errno=EPERM")),
            (["move_mount"], .line("errno=EPERM")),
            (["unshare"], .line("errno=EPERM")),
            (["setns"], .line("errno=EPERM")),
            (["clone", "newns|newnet"], .line("errno=EPERM")),
            (["clone3"], .line("errno=ENOSYS")),
            (["bpf"], .line("errno=EPERM")),
            (["perf_event_open"], .line("errno=EPERM")),
            (["keyctl"], .line("errno=EPERM")),
            (["add_key"], .line("errno=EPERM")),
            (["clock_settime"], .line("errno=EPERM")),
            (["userfaultfd"], .line("errno=EPERM")),
            (["io_uring_setup"], .line("errno=EPERM")),
            (["personality"], .line("errno=EPERM")),
            // Issue 30, #9: secret memory is denied, and without the host network only AF_UNIX
            // sockets are made (AF_VSOCK ignores network namespaces).
            (["memfd_secret"], .line("errno=EPERM")),
            (["socket-vsock"], .line("errno=EAFNOSUPPORT")),
            (["socket-inet"], .line("errno=EAFNOSUPPORT")),
            (["socket-netlink"], .line("errno=EAFNOSUPPORT")),
            (["syscall", "listmount", "0", "0", "0", "0"], .line("errno=EPERM")),
            (["syscall", "mount", "str:tmpfs", "str:/nonexistent/appex-probe", "str:tmpfs", "0", "null"], .line("errno=EPERM")),
            // Killed: nothing an extension does needs these.
            (["reboot"], .killed),
            (["kexec_load"], .killed),
            (["init_module"], .killed),
            (["swapon"], .killed),
            // Allowed calls still work.
            (["getpid"], .line("ok")),
            (["socket-unix"], .line("ok")),
            (["fork"], .line("ok")),
            // The view: nothing of the host's files, /proc shows only its own uid.
            (["escape-dotdot", "/etc/passwd"], .line("errno=ENOENT")),
            (["escape-symlink", "/etc/passwd"], .line("errno=ENOENT")),
            (["escape-symlink", "/var/appex/bundle/appex-probe"], .prefix("ok bytes=")),
            (["proc-environ"], .line("errno=ENOENT")),
            // Signal 0 to its sandbox's init (another uid) and to this test process (a host
            // pid, outside its pid namespace).
            (["kill", "1"], .line("errno=EPERM")),
            (["kill", String(getpid())], .line("errno=ESRCH")),
            (["write-bundle"], .line("errno=EROFS")),
            (["ids"], .prefix("ok uid=")),
            // The policy's limits: 256 open files, 64 tasks.
            (["open-fds", "1000"], .prefix("errno=EMFILE opened=")),
            (["fork-bomb", "200"], .prefix("errno=EAGAIN forked=")),
        ]
        #if arch(x86_64)
        list.append((["iopl"], .killed))
        // The same calls through the i386 and x32 tables: the filter kills any call from
        // another ABI, an allowed one (getpid) included.
        for call in ["getpid", "reboot", "mount", "ptrace", "unshare", "bpf", "keyctl", "clone3", "kill"] {
            list.append((["i386", call], .killed))
            list.append((["x32", call], .killed))
        }
        list.append((["i386", "syscall", "getpid"], .killed))
        list.append((["x32", "syscall", "39"], .killed))
        #endif
        return list
    }()

    func makeStateDirectory() throws -> String {
        try ScratchDirectory.make("cli-probe")
    }

    func cleanUp(_ state: String) {
        try? ScratchDirectory.removeTree(state)
        try? CgroupManager.detect(parentName: "appex").removeParent()
    }

    /// `appex run --json` of `executable` (bare, as a share extension, unless it is a bundle):
    /// the report and the last line of the extension's log.
    func run(
        _ executable: String, _ args: [String], state: String,
        extensionPoint: String? = "com.apple.share-services"
    ) throws -> (json: [String: Any], line: String) {
        let point = extensionPoint.map { ["--extension-point", $0] } ?? []
        // Uids of its own (RLIMIT_NPROC counts a uid's processes machine-wide: the fork bomb
        // must not make another test's execve fail).
        let base = 400_000 + UInt32.random(in: 2000..<4000) * 50
        let r = try AppexBinary.run(
            ["run", "--json", "--state-dir", state, "--uid-range", "\(base)-\(base + 49)"]
                + point + [executable, "--"] + args)
        let json = try #require(try r.json() as? [String: Any], "\(r.stderr)")
        // appex passes the extension's status through, as bwrap does: 128+N when signal N killed it.
        let signal = json["signal"] as? Int
        #expect(r.status == (signal.map { Int32(128 + $0) } ?? Int32(json["exitStatus"] as? Int ?? -1)), "\(r.stderr)")
        let log = try String(contentsOfFile: json["logPath"] as? String ?? "", encoding: .utf8)
        return (json, log.split(separator: "\n").last.map(String.init) ?? "")
    }

    @Test(arguments: cases)
    func attemptUnderTheShippedPolicy(_ args: [String], expected: Outcome) throws {
        let state = try makeStateDirectory()
        defer { cleanUp(state) }
        let (json, line) = try run(Self.probe, args, state: state)
        let what = args.joined(separator: " ")
        switch expected {
        case .line(let s):
            #expect(line == s, "\(what)")
            #expect(json["exitStatus"] as? Int == 0, "\(what)")
        case .prefix(let s):
            #expect(line.hasPrefix(s), "\(what): \(line)")
            #expect(json["exitStatus"] as? Int == 0, "\(what)")
        case .killed:
            #expect(json["signal"] as? Int == Int(SIGSYS), "\(what): \(line)")
            #expect(json["killReason"] as? String == "seccomp-violation", "\(what)")
            // Nothing printed: the call never returned (an "unsupported" line would mean
            // the machine refused the ABI before the filter saw it).
            #expect(line.hasPrefix("--- appex run"), "\(what): \(line)")
        }
    }

    @Test func anotherExtensionsContainerIsOutOfReach() throws {
        let state = try makeStateDirectory()
        defer { cleanUp(state) }
        let dir = state + "/src"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for name in ["owner", "intruder"] {
            try FileManager.default.copyItem(atPath: Self.probe, toPath: dir + "/" + name)
        }
        #expect(try run(dir + "/owner", ["write", "/var/appex/data/Documents/secret", "s3cret"], state: state).line == "ok")
        let secret = state + "/containers/bare.owner/Documents/secret"
        #expect(FileManager.default.fileExists(atPath: secret))
        // By its host path, climbing out of the data directory, and through a planted link.
        for args in [
            ["read", secret], ["exists", state + "/containers/bare.owner"], ["escape-dotdot", secret],
            ["escape-symlink", secret], ["symlink", secret, "/var/appex/data/planted"],
        ] {
            #expect(try run(dir + "/intruder", args, state: state).line == "errno=ENOENT", "\(args)")
        }
        // The planted link stays in the intruder's own container, pointing nowhere it can reach.
        let planted = state + "/containers/bare.intruder/planted"
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: planted)) == secret)
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "s3cret")
    }

    @Test func aSetuidExecutableRunsWithoutItsPrivileges() throws {
        let state = try makeStateDirectory()
        defer { cleanUp(state) }
        let bundle = try RunCLITests().makeBundle(in: state + "/src")
        try FileManager.default.copyItem(atPath: Self.probe, toPath: bundle + "/probe")
        // A root-owned setuid copy: uncontained, it would report euid 0.
        try FileManager.default.copyItem(atPath: Self.probe, toPath: bundle + "/setuid-probe")
        try #require(chown(bundle + "/setuid-probe", 0, 0) == 0 && chmod(bundle + "/setuid-probe", 0o4755) == 0)
        let (json, line) = try run(bundle, ["exec-setuid", "/var/appex/bundle/setuid-probe"], state: state, extensionPoint: nil)
        let uid = try #require(json["uid"] as? Int)
        #expect(line == "ok uid=\(uid) euid=\(uid) gid=\(uid) egid=\(uid)")
        #expect(uid != 0)
    }

    @Test func theHostsLoopbackIsOutOfReach() throws {
        // A listener on the host's loopback; the extension has a network namespace of its own.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        try #require(bound && listen(fd, 4) == 0)
        let port = Int(UInt16(bigEndian: addr.sin_port))
        let state = try makeStateDirectory()
        defer { cleanUp(state) }
        let line = try run(Self.probe, ["connect", String(port)], state: state).line
        // Its filter refuses inet sockets without the host network; its own network namespace
        // stands behind that (ExtensionSandboxTests).
        #expect(line == "errno=EAFNOSUPPORT at=socket", "\(line)")
    }
}
