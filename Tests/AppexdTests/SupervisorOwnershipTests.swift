import AppexCgroups
import AppexHostClient
import AppexSupervisor
import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Supervisors side by side (issue 30, finding 8): two appexds on their own state
/// directories keep each other's extensions and budgets; a second appexd on a socket, state
/// directory or cgroup parent in use is refused and names the holder, and the first stays
/// reachable; embedded supervisors (`appex request --bundle`) run side by side.
@Suite(.serialized) struct SupervisorOwnershipTests {
    typealias Daemon = DaemonTests.Daemon

    /// A daemon that picks its own cgroup parent, with uids of its own.
    static func ownDaemon(uids: String, budget: String? = nil) throws -> Daemon {
        let d = try Daemon()
        d.passCgroupParent = false
        d.cgroupParent = CgroupParentName.daemon(stateDirectory: d.root + "/state")
        d.uidRange = uids
        d.extraArguments = budget.map { ["--memory-budget", $0, "--no-system-pressure"] } ?? []
        return d
    }

    /// The parent cgroup's memory limit (v1 limit_in_bytes, v2 memory.max).
    static func budget(of parent: String) throws -> String {
        let manager = try CgroupManager.detect(parentName: parent)
        let file = manager.version == .v1 ? "memory.limit_in_bytes" : "memory.max"
        return try String(contentsOfFile: manager.parentPaths[0] + "/" + file, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs a command to its end, killed after 30 s should it not end (a second appexd that
    /// was not refused would serve for ever).
    static func run(_ path: String, _ arguments: [String]) throws -> CProgram.Output {
        try CProgram.run("/usr/bin/timeout", ["-s", "KILL", "30", path] + arguments)
    }

    static func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    static func sleeper(_ ms: Int) -> ExtensionItem {
        ExtensionItem(userInfo: ["probe.action": .string("sleep"), "probe.arg": .string(String(ms))])
    }

    @Test(.requiresRoot("appexd needs root")) func twoDaemonsOnTheirOwnStateKeepEachOthersExtensionsAndBudget() async throws {
        let first = try Self.ownDaemon(uids: "312000-312999", budget: "256MiB")
        defer { first.cleanUp() }
        let second = try Self.ownDaemon(uids: "313000-313999")
        defer { second.cleanUp() }
        #expect(first.cgroupParent != second.cgroupParent && first.cgroupParent.hasPrefix("appexd-"))

        try first.start()
        let id = try first.installProbe()
        let host = try HostClient.connect(socketPath: first.socket, identifier: "tests.ownership")
        defer { host.close() }
        let inFlight = try host.startRequest(bundleIdentifier: id, items: [Self.sleeper(5000)])
        #expect(Self.waitFor(seconds: 10) { !first.sandboxProcesses().isEmpty }, "the first appexd's extension runs")
        let limit = try Self.budget(of: first.cgroupParent)
        // The kernel's limit: the budget and its default headroom (a quarter, at least 64 MiB).
        #expect(limit == String((256 + 64) << 20), "the first appexd's budget: \(limit)")
        let running = first.sandboxProcesses()

        // The second starts (and sweeps), serves, and stops (and removes its parent).
        try second.start()
        #expect(try second.appex(["request", try second.installProbe(), "--text", "second"]).status == 0)
        #expect(second.signal(SIGTERM) == 0)
        #expect(
            !FileManager.default.fileExists(atPath: try CgroupManager.detect(parentName: second.cgroupParent).parentPaths[0]),
            "the second appexd removed its own parent")

        #expect(Set(running).isSubset(of: Set(first.sandboxProcesses())), "the first appexd's extension was left alone")
        #expect(try Self.budget(of: first.cgroupParent) == limit, "and so was its budget")
        let served = try await inFlight.outcome()
        #expect(served.outcome == .completed && served.items.first?.attributedContentText == "slept 5000 ms", "\(served)")
        let jetsam = try first.appex(["jetsam", "--json"])
        #expect(jetsam.status == 0 && jetsam.out.contains(String(256 << 20)), "\(jetsam.out) \(jetsam.err)")
    }

    @Test(.requiresRoot("appexd needs root")) func aSecondDaemonOnASocketStateOrParentInUseIsRefused() async throws {
        let first = try Daemon()
        first.uidRange = "312000-312999"
        first.cgroupParent = "appexd-ownership-tests-\(getpid())"
        defer { first.cleanUp() }
        try first.start()
        let pid = try #require(first.process?.processIdentifier)
        let id = try first.installProbe()
        let other = try Daemon()
        other.uidRange = "313000-313999"
        other.cgroupParent = first.cgroupParent + "-other"
        defer { other.cleanUp() }

        var sameSocket = other.arguments
        sameSocket[sameSocket.firstIndex(of: "--socket")! + 1] = first.socket
        var sameState = other.arguments
        sameState[sameState.firstIndex(of: "--state-dir")! + 1] = first.root + "/state"
        var sameParent = other.arguments
        sameParent[sameParent.firstIndex(of: "--cgroup-parent")! + 1] = first.cgroupParent
        let attempts: [(what: String, arguments: [String], names: String)] = [
            ("the same socket", sameSocket, "pid \(pid) (appexd)"),
            ("the same state directory", sameState, "pid \(pid) (appexd)"),
            ("the same cgroup parent", sameParent, "another supervisor runs its extensions under"),
        ]
        for attempt in attempts {
            let r = try Self.run(BuiltProducts.path("appexd"), attempt.arguments)
            #expect(r.status == 75, "\(attempt.what): EX_TEMPFAIL, not \(r.status): \(r.stderr)")
            #expect(r.stderr.contains(attempt.names), "\(attempt.what): \(r.stderr)")
            // The first is still there, on its socket, with its extensions.
            #expect(FileManager.default.fileExists(atPath: first.socket), "\(attempt.what)")
            let served = try first.appex(["request", id, "--text", "still here"])
            #expect(served.status == 0 && served.out.contains("still here"), "\(attempt.what): \(served.err)")
        }
        #expect(try first.cgroupPaths.allSatisfy { FileManager.default.fileExists(atPath: $0) })
    }

    @Test(.requiresRoot("launching needs root")) func embeddedRequestsRunSideBySide() throws {
        let scratch = try Daemon()
        defer { scratch.cleanUp() }
        let bundle = try scratch.writeProbeBundle()
        func request(_ state: String, uids: String, _ action: [String]) throws -> Process {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: BuiltProducts.path("appex"))
            p.arguments =
                [
                    "request", "--bundle", bundle, "--json", "--state-dir", scratch.root + "/" + state,
                    "--uid-range", uids,
                ] + action.flatMap { ["--user-info", $0] }
            p.standardOutput = Pipe()
            p.standardError = Pipe()
            try p.run()
            return p
        }
        func finish(_ p: Process) -> (status: Int32, out: String) {
            let out = (p.standardOutput as! Pipe).fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            return (p.terminationStatus, String(decoding: out, as: UTF8.self))
        }

        let slow = try request("a", uids: "314000-314999", ["probe.action=sleep", "probe.arg=4000"])
        let slowParent = try CgroupManager.detect(parentName: CgroupParentName.embedded("appex-request", pid: slow.processIdentifier))
        #expect(Self.waitFor(seconds: 10) { (try? slowParent.list().isEmpty == false) ?? false }, "the slow request's extension runs")
        let running = try slowParent.list()

        let quick = finish(try request("b", uids: "315000-315999", ["probe.action=echo"]))
        #expect(quick.status == 0 && quick.out.contains("\"completed\""), "\(quick.out)")
        #expect(try slowParent.list() == running, "the quick run swept nothing of the slow one's")

        let slowResult = finish(slow)
        #expect(slowResult.status == 0 && slowResult.out.contains("slept 4000 ms"), "\(slowResult.out)")
        #expect(!FileManager.default.fileExists(atPath: slowParent.parentPaths[0]), "each run removes its own parent")
    }

    /// A parent an embedded run left when it died is swept by the next run; one whose pid is
    /// alive is not.
    @Test(.requiresRoot("launching needs root")) func deadEmbeddedParentsAreSweptLiveOnesAreNot() throws {
        let scratch = try Daemon()
        defer { scratch.cleanUp() }
        let bundle = try scratch.writeProbeBundle()
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let dead = try CgroupManager.detect(parentName: CgroupParentName.embedded("appex-request", pid: gone.processIdentifier))
        let live = try CgroupManager.detect(parentName: CgroupParentName.embedded("appex-request", pid: getpid()))
        defer {
            for manager in [dead, live] {
                _ = try? manager.cleanupLeftovers()
                try? manager.removeParent()
            }
        }
        for manager in [dead, live] {
            try manager.prepare()
            for parent in manager.parentPaths {
                try FileManager.default.createDirectory(atPath: parent + "/left", withIntermediateDirectories: false)
            }
        }
        let r = try Self.run(
            BuiltProducts.path("appex"),
            [
                "request", "--bundle", bundle, "--state-dir", scratch.root + "/embedded",
                "--uid-range", "314000-314999",
            ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dead.parentPaths[0]), "the dead run's parent was swept")
        #expect(try live.list() == ["left"], "the live one's was not")
    }
}
