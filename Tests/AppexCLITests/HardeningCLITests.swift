import AppexCgroups
import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The escapes of the sandbox-hardening review, each attempted the way an extension author
/// would attempt it, through the real `appex run` (and `appex validate`) as root. Every probe
/// stays harmless if it is not contained: paths are throwaway directories, reads are of files
/// that exist on every host.
extension RunCLITests {
    /// The probe's C files, for tests that build it with their own linker flags.
    static let probeSources: [String] = {
        let dir = AppexBinary.packageRoot + "/Sources/appex-probe"
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [])
            .filter { $0.hasSuffix(".c") }.sorted().map { dir + "/" + $0 }
    }()

    /// `Name.appex/` with an Info.plist for the share extension point and `executable` as `probe`.
    func makeBundle(in dir: String, identifier: String = "com.example.hostile.share") throws -> String {
        try BareBundle.writeInfoPlist(
            .init(
                identifier: identifier, executable: "probe", point: "com.apple.share-services",
                activationRule: "<string>TRUEPREDICATE</string>"), in: dir + "/Hostile.appex")
    }

    /// Runs `appex` and fails the test (killing it) if it has not finished in `seconds`: a hang
    /// is the attack here, so the bound only turns a hang into a failure.
    func runBounded(_ arguments: [String], seconds: Int = 30) throws -> (status: Int32, stderr: String) {
        let err = Pipe()
        let p = try startAppex(arguments, stderr: err)
        var waited = 0
        while p.isRunning && waited < seconds * 10 {
            usleep(100_000)
            waited += 1
        }
        if p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            Issue.record("appex \(arguments.joined(separator: " ")) hung for \(seconds) s")
            return (-1, "")
        }
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (p.terminationStatus, text)
    }

    func gcc(_ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/gcc")
        p.arguments = arguments
        try p.run()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0, "gcc \(arguments)")
    }

    // 2. A RUNPATH naming host directories is refused: by validate, and by run before anything
    //    is mounted; nothing shows /etc/passwd inside.
    @Test func runpathNamingHostDirectoriesIsRefused() throws {
        let state = try makeStateDirectory()
        defer {
            try? ScratchDirectory.removeTree(state)
            removeParentCgroup()
        }
        let bundle = try makeBundle(in: state + "/src")
        try gcc(["-O1", "-Wl,--enable-new-dtags", "-Wl,-rpath,/etc:/home", "-o", bundle + "/probe"] + Self.probeSources)

        let v = try AppexBinary.run(["validate", "--json", bundle])
        #expect(v.status == 1)
        #expect(v.stdout.contains("executable.runpath") && v.stdout.contains("/etc") && v.stdout.contains("/home"), "\(v.stdout)")

        let r = try runBounded(["run", "--state-dir", state, bundle, "--", "read", "/etc/passwd"])
        #expect(r.status == 71)
        #expect(r.stderr.contains("RUNPATH entry \"/etc\", \"/home\""), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: state + "/logs/com.example.hostile.share.log"), "it was launched")

        // The same bundle without the RUNPATH runs, and still cannot see /etc/passwd.
        try gcc(["-O1", "-o", bundle + "/probe"] + Self.probeSources)
        let ok = try runBounded(["run", "--state-dir", state, bundle, "--", "read", "/etc/passwd"])
        #expect(ok.status == 0, "\(ok.stderr)")
        let log = try String(contentsOfFile: state + "/logs/com.example.hostile.share.log", encoding: .utf8)
        #expect(log.hasSuffix("errno=ENOENT\n"), "\(log)")
    }

    // 3. The extension owns its container: a `Library` it replaced with a symlink must not make
    //    the next launch (root) create or chown anything where the link points.
    @Test func plantedLibrarySymlinkCreatesNothingOutsideTheContainer() throws {
        let state = try makeStateDirectory()
        defer {
            try? ScratchDirectory.removeTree(state)
            removeParentCgroup()
        }
        let bundle = try makeBundle(in: state + "/src")
        try FileManager.default.copyItem(atPath: Self.probe, toPath: bundle + "/probe")
        #expect(try runBounded(["run", "--state-dir", state, bundle, "--", "pid"]).status == 0)

        let container = state + "/containers/com.example.hostile.share"
        let outside = state + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        var st = stat()
        try #require(stat(container, &st) == 0)
        // What the extension's uid can do in its own container: swap Library for a link.
        try #require(rename(container + "/Library", container + "/Library.old") == 0)
        try #require(symlink(outside, container + "/Library") == 0)
        _ = lchown(container + "/Library", st.st_uid, st.st_gid)

        let r = try runBounded(["run", "--state-dir", state, bundle, "--", "pid"])
        #expect(r.status == 71, "the launch went ahead through a planted link")
        // The walk stops at the link (ELOOP, or ENOTDIR for O_DIRECTORY|O_NOFOLLOW), naming it.
        #expect(r.stderr.contains("[Library]") && (r.stderr.contains("ELOOP") || r.stderr.contains("ENOTDIR")), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty, "root created files outside the container")
        #expect(stat(outside, &st) == 0 && st.st_uid == 0, "root chowned a directory outside the container")
    }

    // 4. The executable is opened beneath the bundle without following links or blocking.
    @Test func executableThatIsASymlinkOrAFIFOIsRefusedPromptly() throws {
        let state = try makeStateDirectory()
        defer {
            try? ScratchDirectory.removeTree(state)
            removeParentCgroup()
        }
        let bundle = try makeBundle(in: state + "/src")
        // A link to a host file: root must not read (or run) it.
        try #require(symlink("/usr/bin/true", bundle + "/probe") == 0)
        var r = try runBounded(["run", "--state-dir", state, bundle, "--", "pid"])
        #expect(r.status == 71)
        #expect(r.stderr.contains("symbolic link"), "\(r.stderr)")
        var v = try AppexBinary.run(["validate", bundle])
        #expect(v.status == 1 && v.stdout.contains("symbolic link"), "\(v.stdout)")

        // A FIFO: opening it for reading would block until a writer came.
        try FileManager.default.removeItem(atPath: bundle + "/probe")
        try #require(mkfifo(bundle + "/probe", 0o755) == 0)
        r = try runBounded(["run", "--state-dir", state, bundle, "--", "pid"])
        #expect(r.status == 71)
        #expect(r.stderr.contains("FIFO"), "\(r.stderr)")
        v = try AppexBinary.run(["validate", bundle])
        #expect(v.status == 1 && v.stdout.contains("FIFO"), "\(v.stdout)")
        // The same as a bare executable.
        r = try runBounded(["run", "--state-dir", state, "--extension-point", "com.apple.share-services", bundle + "/probe"])
        #expect(r.status == 71 && r.stderr.contains("FIFO"), "\(r.stderr)")

        // Info.plist itself as a link to a host file.
        try FileManager.default.removeItem(atPath: bundle + "/probe")
        try FileManager.default.copyItem(atPath: Self.probe, toPath: bundle + "/probe")
        try FileManager.default.moveItem(atPath: bundle + "/Info.plist", toPath: state + "/Info.plist")
        try #require(symlink(state + "/Info.plist", bundle + "/Info.plist") == 0)
        r = try runBounded(["run", "--state-dir", state, bundle, "--", "pid"])
        #expect(r.status != 0 && r.stderr.contains("symbolic link"), "\(r.stderr)")
    }

    // 5. Each sandbox's init has a uid of its own, not `nobody`; a range that overlaps an
    //    account is refused.
    @Test func twoSandboxesInitsHaveDifferentUIDs() throws {
        let state = try makeStateDirectory()
        defer {
            try? ScratchDirectory.removeTree(state)
            removeParentCgroup()
        }
        let dir = state + "/src"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var runs: [Process] = []
        for name in ["first", "second"] {
            try FileManager.default.copyItem(atPath: Self.probe, toPath: dir + "/" + name)
            runs.append(
                try startAppex([
                    "run", "--state-dir", state, "--extension-point", "com.apple.share-services",
                    dir + "/" + name, "--", "sleep", "3",
                ]))
        }
        // Let them finish by themselves (sleep 3): a killed appex could not remove its cgroups.
        defer { for p in runs { p.waitUntilExit() } }
        // The inits: each appex's child that is pid 1 of its own pid namespace.
        var initUIDs: [Int] = []
        for _ in 0..<200 where initUIDs.count < 2 {
            usleep(25_000)
            // An init seen before it dropped root (uid 0) is not done starting yet.
            initUIDs = runs.compactMap { p in
                children(of: p.processIdentifier).first { nspidIsOne($0) }.flatMap { uid(of: $0) }
            }.filter { $0 != 0 }
        }
        try #require(initUIDs.count == 2, "no sandbox inits found")
        #expect(initUIDs[0] != initUIDs[1])
        #expect(!initUIDs.contains(65534))
        let assigned = try String(contentsOfFile: state + "/uids", encoding: .utf8)
        for u in initUIDs { #expect(assigned.contains("sandbox-init:bare.") && assigned.contains(" \(u)\n")) }
        for p in runs { p.waitUntilExit() }

        // nobody (65534) is an account: a range over it is refused, naming it.
        let r = try runBounded([
            "run", "--state-dir", state, "--uid-range", "65000-66000",
            "--extension-point", "com.apple.share-services", dir + "/first", "--", "pid",
        ])
        #expect(r.status == 71)
        #expect(r.stderr.contains("65534") && r.stderr.contains("/etc/passwd"), "\(r.stderr)")
    }

    // 6. stdout is a pipe Appex copies: ftruncate on it (which cut the log file when stdout was
    //    the log itself) fails, and reopening it with O_TRUNC is refused.
    @Test func anExtensionCannotTruncateItsLog() throws {
        let state = try makeStateDirectory()
        defer {
            try? ScratchDirectory.removeTree(state)
            removeParentCgroup()
        }
        let args = ["run", "--state-dir", state, "--extension-point", "com.apple.share-services", Self.probe, "--"]
        #expect(try runBounded(args + ["pid"]).status == 0)
        #expect(try runBounded(args + ["truncate-stdout"]).status == 0)
        #expect(try runBounded(args + ["write", "/proc/self/fd/1", "overwritten"]).status == 0)
        let log = try String(contentsOfFile: state + "/logs/bare.appex-probe.log", encoding: .utf8)
        #expect(log.contains("ok pid=2\n"), "the first run's output is gone: \(log)")
        let lines = log.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("--- appex run") }.count == 3)
        #expect(lines.contains("errno=EINVAL"), "ftruncate on a pipe: \(log)")
        #expect(lines.last == "errno=EACCES", "\(log)")
        var st = stat()
        #expect(stat(state + "/logs/bare.appex-probe.log", &st) == 0 && st.st_uid == 0 && (st.st_mode & 0o077) == 0o040)
    }

    // 8. No capability can come back, and RLIMIT_NPROC is set as documented.
    @Test func extensionHasAnEmptyBoundingSetAndItsTaskLimit() throws {
        let state = try makeStateDirectory()
        defer {
            try? ScratchDirectory.removeTree(state)
            removeParentCgroup()
        }
        let p = try startAppex([
            "run", "--state-dir", state, "--extension-point", "com.apple.share-services",
            Self.probe, "--", "sleep", "3",
        ])
        // Let it finish by itself: a killed appex could not remove its cgroups.
        defer { p.waitUntilExit() }
        var pid: Int32?
        for _ in 0..<200 where pid == nil {
            usleep(25_000)
            pid = children(of: p.processIdentifier).first { !nspidIsOne($0) && (uid(of: $0) ?? 0) >= 200_000 }
        }
        let ext = try #require(pid, "no extension process appeared")
        let status = try String(contentsOfFile: "/proc/\(ext)/status", encoding: .utf8)
        #expect(status.contains("CapBnd:\t0000000000000000"), "\(status)")
        #expect(status.contains("CapAmb:\t0000000000000000"))
        #expect(status.contains("CapPrm:\t0000000000000000"))
        let limits = try String(contentsOfFile: "/proc/\(ext)/limits", encoding: .utf8)
        let nproc = limits.split(separator: "\n").first { $0.hasPrefix("Max processes") }.map(String.init) ?? ""
        // The share policy's pidsLimit (the defaults' 64), soft and hard.
        #expect(nproc.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).prefix(2) == ["64", "64"], "\(nproc)")
    }

    func nspidIsOne(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("NSpid:") })
        else { return false }
        return line.split(separator: "\t").last == "1"
    }
}
