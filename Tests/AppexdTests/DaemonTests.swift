import AppexCgroups
import AppexHostClient
import AppexTestSupport
import AppexWire
import AppexWireIO
import CAppexLinux
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real `appexd` binary on a private state directory and socket, driven through the real
/// CLI and host client: install, request, authorisation by SO_PEERCRED, restart, SIGKILL
/// recovery and SIGTERM shutdown.
@Suite(.serialized) struct DaemonTests {
    final class Daemon: @unchecked Sendable {
        let root: String
        var socket: String
        var cgroupParent: String
        /// false: appexd picks its own cgroup parent (from its state directory).
        var passCgroupParent = true
        /// false: the socket is not on the command line (the configuration file may name it).
        var passSocket = true
        /// Its own: appexds of tests that run at once must not share extension uids (a starting
        /// appexd kills what runs as the uids its state directory assigned).
        var uidRange = Daemon.nextUIDRange()
        var process: Process?
        /// More appexd arguments (e.g. --memory-budget).
        var extraArguments: [String] = []
        /// Where appexd's log goes; nil: the test's own standard error.
        var logPath: String?
        /// A command appexd is started through (e.g. prlimit), which execs it.
        var commandPrefix: [String] = []
        /// Variables added to appexd's environment (the test's own otherwise).
        var environment: [String: String] = [:]
        var pid: Int32? { process?.processIdentifier }

        private static let rangesHandedOut = Mutex(0)

        static func nextUIDRange() -> String {
            let start =
                340_000 + 100
                * rangesHandedOut.withLock { n in
                    defer { n += 1 }
                    return n
                }
            return "\(start)-\(start + 99)"
        }

        /// `tag`: a suite of its own gets its own cgroup parent and uids, so that its appexd
        /// never takes another suite's (running meanwhile) for a predecessor's leftovers.
        init(tag: String = "daemon-tests") throws {
            root = try ScratchDirectory.make("appexd-test", mode: 0o755)
            socket = root + "/appexd.sock"
            // Its own parent: appexds of tests that run at once may not share one (each claims it).
            cgroupParent = "appexd-\(tag)-\(getpid())-" + root.split(separator: "-").last!
            // uid 4242 may host but not administer; nobody else but root may do anything.
            try Data("hosts: [4242]\nadmins: []\n".utf8).write(to: URL(fileURLWithPath: root + "/appexd.yaml"))
        }

        /// appexd's command line.
        var arguments: [String] {
            ["--state-dir", root + "/state"] + (passSocket ? ["--socket", socket] : [])
                + [
                    "--config", root + "/appexd.yaml", "--log-level", "warning",
                    // Uids of its own, so processes of other tests running meanwhile are
                    // never taken for this appexd's.
                    "--uid-range", uidRange, "--metrics", "127.0.0.1:0",
                ]
                + (passCgroupParent ? ["--cgroup-parent", cgroupParent] : []) + extraArguments
        }

        func start() throws {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: commandPrefix.first ?? BuiltProducts.path("appexd"))
            p.arguments = (commandPrefix.isEmpty ? [] : commandPrefix.dropFirst() + [BuiltProducts.path("appexd")]) + arguments
            if !environment.isEmpty {
                p.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
            }
            if let logPath {
                FileManager.default.createFile(atPath: logPath, contents: nil)
                p.standardError = FileHandle(forWritingAtPath: logPath)
            }
            try p.run()
            process = p
            // Up to 30 s: a debug appexd under TCG (make test-cgroup-v2's guest) took over the
            // default 5 s in two runs of four; here it answers in well under one.
            try #require(HostClient.waitUntilServing(socketPath: socket, attempts: 1500), "appexd did not start answering")
        }

        func signal(_ s: Int32) -> Int32 {
            guard let p = process else { return -1 }
            kill(p.processIdentifier, s)
            p.waitUntilExit()
            process = nil
            return p.terminationStatus
        }

        func appex(_ args: [String], asUID uid: UInt32? = nil, socket useSocket: Bool = true) throws -> (status: Int32, out: String, err: String) {
            // As another uid, the full tool itself: the `appex` front finds it beside its own
            // file, and this uid may not be able to search the build tree (a root-owned 0700
            // checkout; setpriv's exec passes only because setpriv still holds root's
            // capabilities then). Installed, both sit in a directory everyone may search.
            let tool = uid == nil ? "appex" : "appex-commands"
            var command = [BuiltProducts.path(tool)] + args + (useSocket ? ["--socket", socket] : [])
            if let uid { command = ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"] + command }
            let r = try CProgram.run(command[0], Array(command.dropFirst()))
            return (r.status, r.stdout, r.stderr)
        }

        /// A bare probe bundle at root/src, installed and enabled through the CLI.
        func installProbe() throws -> String {
            let bundle = try writeProbeBundle()
            let installed = try appex(["install", bundle])
            #expect(installed.status == 0, "\(installed.err)")
            #expect(try appex(["enable", "dev.appex.tests.daemon.probe"]).status == 0)
            return "dev.appex.tests.daemon.probe"
        }

        /// A bundle around the probe extension, by default a bare one at root/src/<name>.appex.
        func writeProbeBundle(
            at path: String? = nil, identifier: String = "dev.appex.tests.daemon.probe",
            point: String = "com.apple.widgetkit-extension", name: String = "Probe"
        ) throws -> String {
            let bundle = path ?? root + "/src/\(name).appex"
            try BareBundle.write(
                at: bundle, executable: "probe", from: BuiltProducts.path("appex-probe-extension"),
                identifier: identifier, point: point)
            return bundle
        }

        var cgroupPaths: [String] {
            (try? CgroupManager.detect(parentName: cgroupParent).parentPaths) ?? []
        }

        /// Processes running as a uid this state directory allocated (extensions, inits).
        func sandboxProcesses() -> [Int32] {
            guard let table = try? String(contentsOfFile: root + "/state/uids", encoding: .utf8) else { return [] }
            let uids = Set(table.split(separator: "\n").compactMap { $0.split(separator: " ").last.flatMap { UInt32($0) } })
            let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
            return pids.filter { pid in
                guard let s = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                    let line = s.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") }),
                    let uid = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first.flatMap({ UInt32($0) })
                else { return false }
                return uids.contains(uid)
            }
        }

        func cleanUp() {
            if process != nil { _ = signal(SIGTERM) }
            // Even after a failed test: no cgroup of this appexd stays behind.
            if let manager = try? CgroupManager.detect(parentName: cgroupParent) {
                _ = try? manager.cleanupLeftovers()
                try? manager.removeParent()
            }
            try? ScratchDirectory.removeTree(root)
        }
    }

    func withDaemon(_ body: (Daemon) async throws -> Void) async throws {
        try RequiresRoot.check("appexd needs root")
        let d = try Daemon()
        defer { d.cleanUp() }
        try d.start()
        try await body(d)
    }

    @Test func requestThroughTheDaemonAndTheCLI() async throws {
        try await withDaemon { d in
            let id = try d.installProbe()
            let r = try d.appex(["request", id, "--text", "via appexd", "--json"])
            #expect(r.status == 0, "\(r.err)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
            #expect(json["outcome"] as? String == "completed")
            #expect(json["cold"] as? Bool == true)
            #expect(((json["items"] as? [[String: Any]])?.first?["contentText"]) as? String == "via appexd")
            let phases = try #require(json["phases"] as? [String: Any])
            #expect(phases["checkIn"] != nil && phases["roundTrip"] != nil)

            let warm = try d.appex(["request", id, "--text", "again", "--json"])
            let warmJSON = try #require(try JSONSerialization.jsonObject(with: Data(warm.out.utf8)) as? [String: Any])
            #expect(warmJSON["cold"] as? Bool == false)

            let list = try d.appex(["list", "--json"])
            #expect(list.out.contains(id) && list.out.contains("\"enabled\" : true"))
        }
    }

    /// A host that sends appexd a malformed, truncated, oversized or out-of-order frame on the
    /// control socket is refused and disconnected; a request another host has in flight
    /// completes, and appexd goes on serving.
    @Test func badFramesOnTheControlSocketEndOnlyThatConnection() async throws {
        try await withDaemon { d in
            let id = try d.installProbe()
            let host = try HostClient.connect(socketPath: d.socket, identifier: "tests.good-host")
            defer { host.close() }
            let sleeper = ExtensionItem(userInfo: ["probe.action": .string("sleep"), "probe.arg": .string("500")])
            let inFlight = try host.startRequest(bundleIdentifier: id, items: [sleeper])

            let hello = try WireCodec.encode(.hello(Hello(bundleIdentifier: "tests.bad-host", pid: getpid())))
            let request = try WireCodec.encode(.hostBeginRequest(HostBeginRequest(requestID: 1, bundleIdentifier: id, items: [])))
            var badMagic = hello
            badMagic[0] ^= 0xff
            let attacks: [(name: String, frames: [[UInt8]], kind: String)] = [
                ("bad magic", [badMagic], "bad-magic"),
                ("truncated", [Array(hello.dropLast(4))], "truncated"),
                ("oversized", [hello + [UInt8](repeating: 0, count: 131_073 - hello.count)], "frame-too-large"),
                ("request before Hello", [request], "out-of-order"),
                ("second Hello", [hello, hello], "out-of-order"),
            ]
            for attack in attacks {
                let answers = try Self.sendRaw(attack.frames, to: d.socket)
                // appexd's Hello (when ours was good), then a Refusal naming the problem, then the end.
                #expect(answers.last == "end", "\(attack.name): \(answers)")
                #expect(answers.dropLast().last?.hasPrefix("refusal protocol-error: \(attack.kind)") == true, "\(attack.name): \(answers)")
            }

            let served = try await inFlight.outcome()
            #expect(served.outcome == .completed && served.items.first?.attributedContentText == "slept 500 ms", "\(served)")
            let after = try await host.beginRequest(bundleIdentifier: id, items: [ExtensionItem(attributedContentText: "after")])
            #expect(after.outcome == .completed && after.items.first?.attributedContentText == "after")
        }
    }

    /// Sends raw records on a fresh control connection and reads what comes back until the
    /// end: "hello", "refusal REASON: MESSAGE", other message names, then "end". A receive
    /// timeout turns a connection appexd failed to close into "timeout" instead of a hang.
    static func sendRaw(_ frames: [[UInt8]], to path: String) throws -> [String] {
        let socket = try WireSocket.connect(path: path)
        defer { socket.close() }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        for frame in frames { _ = try? socket.send(frame: frame) }
        var answers: [String] = []
        while answers.count < 8 {
            do {
                switch try socket.receive() {
                case .frame(let f):
                    f.closeDescriptors()
                    if case .refusal(let r) = f.message {
                        answers.append("refusal \(r.reason.rawValue): \(r.message ?? "")")
                    } else {
                        answers.append(f.message.type.name)
                    }
                case .endOfStream:
                    answers.append("end")
                    return answers
                case .wouldBlock:
                    continue
                }
            } catch let error as SocketError where error.errno == EAGAIN {
                answers.append("timeout")
                return answers
            } catch let error as SocketError where error.errno == ECONNRESET {
                answers.append("end")
                return answers
            }
        }
        return answers
    }

    @Test(.requiresRoot("launching needs root")) func requestWithBundleNeedsNoDaemon() async throws {
        let d = try Daemon()
        defer { d.cleanUp() }
        let bundle = try d.writeProbeBundle()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: BuiltProducts.path("appex"))
        p.arguments = [
            "request", "--bundle", bundle, "--text", "embedded", "--json",
            "--state-dir", d.root + "/embedded", "--uid-range", "329000-329999",
        ]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["outcome"] as? String == "completed" && json["cold"] as? Bool == true)
        #expect(((json["items"] as? [[String: Any]])?.first?["contentText"]) as? String == "embedded")
    }

    @Test func peersAreAuthorisedByUID() async throws {
        try await withDaemon { d in
            let id = try d.installProbe()
            // 4242 may host: its request goes through.
            let host = try d.appex(["request", id, "--text", "hi"], asUID: 4242)
            #expect(host.status == 0, "\(host.out) \(host.err)")
            // ... but may not administer.
            let admin = try d.appex(["disable", id], asUID: 4242)
            #expect(admin.status != 0 && admin.err.contains("not-authorized"), "\(admin.err)")
            // ... nor list what is installed: List is an administrator's (issue 30, #9).
            let list = try d.appex(["list"], asUID: 4242)
            #expect(list.status != 0 && list.err.contains("not-authorized"), "\(list.err)")
            // 4343 is neither: refused at hello.
            let stranger = try d.appex(["list"], asUID: 4343)
            #expect(stranger.status != 0 && stranger.err.contains("not-authorized"), "\(stranger.err)")
        }
    }

    /// `appex jetsam` asks the running appexd (budget, level, the live probe with its band as a
    /// number); after SIGTERM, `appex kills` reads the probe's `supervisor-shutdown` record from
    /// the state database, with its band and trigger-to-death time.
    @Test(.requiresRoot("appexd needs root")) func jetsamAndKillsThroughTheCLI() async throws {
        let d = try Daemon()
        defer { d.cleanUp() }
        d.extraArguments = ["--memory-budget", "256MiB", "--no-system-pressure"]
        try d.start()
        let id = try d.installProbe()
        #expect(try d.appex(["request", id, "--text", "hi", "--band", "background"]).status == 0)
        let j = try d.appex(["jetsam", "--json"])
        #expect(j.status == 0, "\(j.err)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(j.out.utf8)) as? [String: Any])
        // Only the budget counts (--no-system-pressure): well under it, the level is normal.
        #expect(report["level"] as? String == "normal", "\(report)")
        #expect(report["budgetBytes"] as? Int == 256 << 20)
        let entries = try #require(report["extensions"] as? [[String: Any]])
        let probe = try #require(entries.first { $0["bundleIdentifier"] as? String == id }, "\(entries)")
        let band = try #require(probe["band"] as? Int)
        #expect([0, 10, 30].contains(band), "asked for background (30), then aging (10) and idle (0): \(band)")
        #expect((probe["pid"] as? Int ?? 0) > 0 && probe["footprintBytes"] is Int)
        let table = try d.appex(["jetsam"])
        #expect(table.status == 0 && table.out.contains("pressure normal") && table.out.contains(id), "\(table.out)")

        #expect(d.signal(SIGTERM) == 0)
        let k = try d.appex(["kills", "--json", "--state-dir", d.root + "/state"], socket: false)
        #expect(k.status == 0, "\(k.err)")
        let kills = try #require(try JSONSerialization.jsonObject(with: Data(k.out.utf8)) as? [[String: Any]])
        let record = try #require(kills.first, "\(k.out)")
        #expect(record["bundleIdentifier"] as? String == id && record["reason"] as? String == "supervisor-shutdown", "\(record)")
        #expect(record["band"] is Int && record["triggerToDeathMicros"] is Int && record["time"] is String)
        #expect(record.keys.contains("footprintBytes"))
    }

    @Test func restartKeepsTheRegistryAndSIGTERMIsClean() async throws {
        try await withDaemon { d in
            let id = try d.installProbe()
            #expect(try d.appex(["request", id]).status == 0)
            #expect(d.signal(SIGTERM) == 0, "SIGTERM exits 0")
            #expect(!FileManager.default.fileExists(atPath: d.socket), "the socket is removed")
            #expect(d.cgroupPaths.allSatisfy { !FileManager.default.fileExists(atPath: $0) }, "no cgroup left")
            #expect(d.sandboxProcesses().isEmpty, "no extension or sandbox init left")
            try d.start()
            let list = try d.appex(["list", "--json"])
            #expect(list.out.contains(id), "the registry survives the restart")
            #expect(try d.appex(["request", id]).status == 0)
        }
    }

    /// Reaps this appexd's adopted processes until none is left (or two seconds pass): only
    /// those pids, never another test's children.
    static func reapAdopted(_ d: Daemon) {
        for _ in 0..<200 where !d.sandboxProcesses().isEmpty {
            for pid in d.sandboxProcesses() {
                var status: Int32 = 0
                _ = waitpid(pid, &status, WNOHANG)
            }
            usleep(10_000)
        }
    }

    @Test func sigkillUnderLoadLeavesNothingAfterRestart() async throws {
        #expect(appex_set_child_subreaper(1) == 0)
        defer { _ = appex_set_child_subreaper(0) }
        try await withDaemon { d in
            let id = try d.installProbe()
            // Requests in flight from three clients while appexd is killed; every client has
            // finished (its connection lost) before the restart, so nothing new starts.
            let group = DispatchGroup()
            for _ in 0..<3 {
                group.enter()
                Thread.detachNewThread {
                    for _ in 0..<20 { _ = try? d.appex(["request", id]) }
                    group.leave()
                }
            }
            usleep(300_000)
            _ = d.signal(SIGKILL)
            group.wait()
            // A killed appexd's children are adopted by pid 1, which reaps them on a real
            // system (systemd); this test process is the subreaper that stands in for it.
            Self.reapAdopted(d)
            try d.start()
            // The restarted appexd swept its predecessor's cgroups and processes before listening.
            let orphans = d.sandboxProcesses()
            let described = orphans.map { pid in
                ((try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? "").split(separator: "\n").prefix(8).joined(separator: " ")
            }
            #expect(orphans.isEmpty, "orphans: \(described)")
            let manager = try CgroupManager.detect(parentName: d.cgroupParent)
            let leftovers = try manager.list()
            #expect(leftovers.isEmpty, "leftover cgroups: \(leftovers)")
            #expect(try d.appex(["request", id]).status == 0, "and it serves again")
        }
    }
}
