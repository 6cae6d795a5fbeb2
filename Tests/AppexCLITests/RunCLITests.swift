import AppexCgroups
import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `appex run` as a user runs it: the built binary, a real sandbox, as root.
@Suite(.serialized, .requiresRoot("appex run needs root"))
struct RunCLITests {
    static let probe = BuiltProducts.path("appex-probe")

    /// `appex run` creates its parent cgroup (`appex`) and leaves it for the next run; the
    /// tests remove it when empty (rmdir refuses a parent that is still in use).
    func removeParentCgroup() {
        try? CgroupManager.detect(parentName: "appex").removeParent()
    }

    func makeStateDirectory() throws -> String {
        try ScratchDirectory.make("cli-run")
    }

    @Test func jsonReportsExitPhasesAndMemoryButNotTheExtensionsOutput() throws {
        let state = try makeStateDirectory()
        defer {
            try? ScratchDirectory.removeTree(state)
            removeParentCgroup()
        }
        let r = try AppexBinary.run([
            "run", "--json", "--state-dir", state,
            "--extension-point", "com.apple.share-services", Self.probe, "--", "pid",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try r.json() as? [String: Any])
        #expect(json["exitStatus"] as? Int == 0)
        #expect(json["signal"] is NSNull)
        #expect(json["killReason"] is NSNull)
        #expect((json["peakMemoryBytes"] as? Int ?? 0) > 0)
        let phases = try #require(json["phases"] as? [String: Int])
        for name in ["prepare", "view", "clone", "sandbox", "exec", "launch", "run"] {
            #expect(phases[name] != nil, "phase \(name) missing")
        }
        // The extension's stdout went to its log, not into the report.
        #expect(!r.stdout.contains("ok pid="))
        let log = try String(contentsOfFile: json["logPath"] as? String ?? "", encoding: .utf8)
        #expect(log.hasSuffix("ok pid=2\n"))
    }

    /// The sandbox init holds the extension's pid namespace only while the supervisor lives:
    /// kill `appex run` and its extension goes with it.
    @Test func killedSupervisorTakesItsExtensionWithIt() throws {
        let state = try makeStateDirectory()
        defer {
            try? ScratchDirectory.removeTree(state)
            removeParentCgroup()
        }
        let appex = try startAppex([
            "run", "--state-dir", state, "--extension-point", "com.apple.share-services",
            Self.probe, "--", "sleep", "30",
        ])

        // The extension: appex's child running as the extension's uid (its sandbox init, also
        // appex's child, has a uid of its own). Its uid switch comes after it joined its cgroup,
        // so the cgroup is known from then on.
        var extensionPID: Int32?
        for _ in 0..<200 where extensionPID == nil {
            usleep(25_000)
            let assigned = (try? String(contentsOfFile: state + "/uids", encoding: .utf8)) ?? ""
            let extensionUIDs = Set(
                assigned.split(separator: "\n").filter { !$0.hasPrefix("sandbox-init:") }
                    .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } })
            extensionPID = children(of: appex.processIdentifier).first { uid(of: $0).map(extensionUIDs.contains) ?? false }
        }
        let pid = try #require(extensionPID, "no extension process appeared")
        // v1: the memory hierarchy's line; v2: the unified line, below a delegated subtree if any.
        let cgroupName = try String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8)
            .split(separator: "\n").first { $0.contains(":memory:/appex/") || ($0.hasPrefix("0::") && $0.contains("/appex/")) }
            .map { String($0.split(separator: "/").last!) }
        #expect(cgroupName != nil, "the extension is in no appex memory cgroup")

        kill(appex.processIdentifier, SIGKILL)
        appex.waitUntilExit()
        var gone = false
        for _ in 0..<200 where !gone {
            // Dead: no such process, or a zombie waiting for whoever adopted it to reap it.
            gone =
                (kill(pid, 0) == -1 && errno == ESRCH)
                || ((try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?
                    .split(separator: ")").last?.split(separator: " ").first == "Z")
            if !gone { usleep(25_000) }
        }
        #expect(gone, "the extension outlived its supervisor")

        // A dead supervisor cannot remove its cgroups; the next start would. Do it here: every
        // cgroup named after that appex process (<bundle id>-<pid>-<n>).
        let manager = try CgroupManager.detect(parentName: "appex")
        let mine = try manager.list().filter { $0 == cgroupName || $0.contains("-\(appex.processIdentifier)-") }
        #expect(!mine.isEmpty)
        for name in mine {
            if let cg = try manager.existing(name: name) {
                try cg.killAll()
                try cg.remove()
            }
        }
    }

    /// Starts `appex` in the background (output discarded unless `stderr` is given).
    func startAppex(_ arguments: [String], stderr: Pipe? = nil) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: AppexBinary.path)
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = stderr ?? FileHandle.nullDevice
        try p.run()
        return p
    }

    func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task -> [Int32] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    func uid(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") })
        else { return nil }
        return line.split(separator: "\t").dropFirst().first.flatMap { Int($0) }
    }
}

extension RunCLITests {
    @Test func repeatedLaunchesEnterOneSandbox() throws {
        let state = try makeStateDirectory()
        defer {
            try? ScratchDirectory.removeTree(state)
            removeParentCgroup()
        }
        let r = try AppexBinary.run([
            "run", "--json", "--launches", "3", "--state-dir", state,
            "--extension-point", "com.apple.share-services", Self.probe, "--", "pid",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let reports = try #require(try r.json() as? [[String: Any]])
        #expect(reports.count == 3)
        #expect(reports.allSatisfy { $0["exitStatus"] as? Int == 0 })
        // Only the first built the sandbox; each had its own cgroup.
        let phases = reports.compactMap { $0["phases"] as? [String: Int] }
        #expect(phases.map { $0["view"] != nil } == [true, false, false])
        // The build counts in the first launch's prepare, as it does for a single run.
        #expect((phases[0]["prepare"] ?? 0) >= (phases[0]["view"] ?? .max))
        #expect(Set(reports.compactMap { $0["cgroup"] as? String }).count == 3)
        // One pid namespace: the probe was pid 2, 3 and 4 after the init.
        let log = try String(contentsOfFile: reports[0]["logPath"] as? String ?? "", encoding: .utf8)
        #expect(log.split(separator: "\n").filter { $0.hasPrefix("ok pid=") } == ["ok pid=2", "ok pid=3", "ok pid=4"])
    }
}
