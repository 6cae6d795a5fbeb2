import AppexHostClient
import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonTests {
    /// Background transfers (issue 37, Docs/transfers.md) through the real appexd, CLI,
    /// `appex-transfer` worker and Share example, against a real HTTP server on loopback that
    /// the test starts. Nested in DaemonTests, so it runs serialized with them.
    @Suite struct BackgroundTransferTests {
        static let app = "dev.appex.tests.transfers"
        static let share = app + ".share"
        static let share2 = app + ".share2"
        static let group = "group.dev.appex.examples"

        /// appexd with a share policy overlay (idle exit after 1 s, a 1 MiB quota), the test app
        /// (two Share extensions) installed and enabled, and the HTTP server.
        /// `configuration`: appexd.yaml's text instead of the suite's default.
        static func withTransfers(
            configuration: String? = nil,
            _ body: (DaemonTests.Daemon, TransferTestServer) async throws -> Void
        ) async throws {
            try RequiresRoot.check("appexd needs root")
            let d = try Daemon(tag: "transfer-tests")
            defer { d.cleanUp() }
            if let configuration { try Data(configuration.utf8).write(to: URL(fileURLWithPath: d.root + "/appexd.yaml")) }
            let policies = d.root + "/policies"
            try FileManager.default.createDirectory(atPath: policies + "/extension-points", withIntermediateDirectories: true)
            try Data(
                """
                extensionPoints: [com.apple.share-services]
                title: Share, for the transfer tests
                idleTimeout: 1s
                network: entitled
                entitlements:
                  grantable:
                    - com.apple.security.application-groups
                    - com.apple.security.network.client
                backgroundTransfers:
                  concurrent: 2
                  pending: 8
                  quota: 1MiB
                  timeLimit: 60s

                """.utf8
            ).write(to: URL(fileURLWithPath: policies + "/extension-points/share.yaml"))
            d.extraArguments = ["--policies", policies, "--no-system-pressure"]
            try d.start()
            let appPath = try writeApp(d)
            let installed = try d.appex(["install", appPath])
            try #require(installed.status == 0, "install: \(installed.err)")
            for id in [share, share2] { try #require(try d.appex(["enable", id]).status == 0) }
            let server = try TransferTestServer(directory: d.root + "/http")
            defer { server.stop() }
            try await body(d, server)
        }

        /// The app: Share.appex and Share2.appex, both the Share example's executable, both in
        /// the app group and entitled to the network.
        static func writeApp(_ d: DaemonTests.Daemon) throws -> String {
            let appPath = d.root + "/src/Transfers.app"
            let shipped = try String(contentsOfFile: Corpus.packageRoot + "/Examples/ExampleHost.app/PlugIns/Share.appex/Info.plist", encoding: .utf8)
            let entitlements = try String(
                contentsOfFile: Corpus.packageRoot + "/Examples/ExampleHost.app/PlugIns/Share.appex/Entitlements.plist", encoding: .utf8)
            for (name, id) in [("Share", share), ("Share2", share2)] {
                let bundle = appPath + "/PlugIns/\(name).appex"
                try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: BuiltProducts.path("AppexExampleShare"), toPath: bundle + "/share")
                try Data(shipped.replacingOccurrences(of: "dev.appex.examples.host.share", with: id).utf8)
                    .write(to: URL(fileURLWithPath: bundle + "/Info.plist"))
                try Data(entitlements.utf8).write(to: URL(fileURLWithPath: bundle + "/Entitlements.plist"))
            }
            try BareBundle.writeInfoPlist(.app(app, version: "1"), in: appPath)
            for dir in [d.root + "/src", appPath, appPath + "/PlugIns"] { chmod(dir, 0o755) }
            return appPath
        }

        static func groupDirectory(_ d: DaemonTests.Daemon) -> String { d.root + "/state/groups/" + group }

        /// Asks `id` for a note with background work in `info`; returns what it said of it.
        static func request(_ d: DaemonTests.Daemon, _ info: [String: String], as id: String = share) throws -> String {
            let r = try d.appex(
                ["request", id, "--text", "background", "--json"]
                    + info.sorted { $0.key < $1.key }.flatMap { ["--user-info", "\($0.key)=\($0.value)"] })
            try #require(r.status == 0, "request: \(r.err)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
            let items = try #require(json["items"] as? [[String: Any]])
            let userInfo = try #require(items.first?["userInfo"] as? [String: Any], "no userInfo in \(r.out)")
            return userInfo["transfer"] as? String ?? ""
        }

        /// Asks the Share example for a download of `size` bytes served a tenth at a time with
        /// `delay` ms between, into `file`, and expects it to be scheduled.
        static func slowDownload(_ d: DaemonTests.Daemon, _ server: TransferTestServer, size: Int, delay: Int, into file: String) throws {
            let said = try request(
                d,
                [
                    "backgroundDownload": server.base + "/blob/\(size)?delay=\(delay)&chunk=\(size / 10)",
                    "backgroundFile": file,
                ])
            #expect(said.hasPrefix("scheduled "), "\(said)")
        }

        /// Asks for `info`, expects it scheduled, and waits (30 s at most) until the events log
        /// shows `needle`.
        static func schedule(_ d: DaemonTests.Daemon, _ info: [String: String], untilTheLogShows needle: String) throws {
            let said = try request(d, info)
            #expect(said.hasPrefix("scheduled "), "\(said)")
            #expect(eventually(30) { eventsLog(d).contains(needle) }, "\(eventsLog(d))")
        }

        /// The Share example's record of the session results it was given.
        static func eventsLog(_ d: DaemonTests.Daemon) -> String {
            (try? String(contentsOfFile: groupDirectory(d) + "/transfer-events.log", encoding: .utf8)) ?? ""
        }

        static func transfers(_ d: DaemonTests.Daemon) throws -> [[String: Any]] {
            let r = try d.appex(["transfers", "--json", "--state-dir", d.root + "/state"], socket: false)
            try #require(r.status == 0, "appex transfers: \(r.err)")
            return try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [[String: Any]])
        }

        /// Polls by the clock until `condition` holds or `seconds` pass.
        static func eventually(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                if try condition() { return true }
                usleep(50_000)
            }
            return try condition()
        }

        /// Processes whose command is `comm` (the worker: `appex-transfer`; the example: `share`).
        static func processes(named comm: String, bundle: String? = nil) -> [Int32] {
            let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
            return pids.filter { pid in
                guard (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) == comm + "\n" else { return false }
                guard let bundle else { return true }
                let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") ?? Data()
                return environ.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == "APPEX_BUNDLE_IDENTIFIER=" + bundle }
            }
        }

        @Test func aSlowDownloadFinishesAfterTheExtensionExitedAndItsEventRelaunchesIt() async throws {
            try await Self.withTransfers { d, server in
                let size = 400_000
                try Self.slowDownload(d, server, size: size, delay: 500, into: "slow.bin")
                // The extension exits (idle, 1 s) while its transfer still runs.
                #expect(Self.eventually(10) { Self.processes(named: "share", bundle: Self.share).isEmpty })
                let whileGone = try Self.transfers(d)
                #expect(whileGone.first?["state"] as? String == "running", "\(whileGone)")
                #expect(Self.eventsLog(d).isEmpty)
                // Done: the extension was launched again, with the session's results.
                #expect(
                    Self.eventually(30) { Self.eventsLog(d).contains("file=slow.bin outcome=completed bytes=\(size) status=200") },
                    "\(Self.eventsLog(d))")
                let file = FileManager.default.contents(atPath: Self.groupDirectory(d) + "/slow.bin")
                #expect(file.map(Array.init) == TransferTestServer.blob(size))
                #expect(try Self.eventually(5) { (try Self.transfers(d).first?["delivered"] as? Bool) == true })
                var st = stat()
                #expect(stat(Self.groupDirectory(d) + "/slow.bin", &st) == 0 && st.st_uid != 0, "written as the extension's uid")
            }
        }

        @Test func aSecondProcessOnTheSameSessionIsRefused() async throws {
            try await Self.withTransfers { d, server in
                let slow = server.base + "/blob/300000?delay=500&chunk=30000"
                let first = try Self.request(
                    d, ["backgroundDownload": slow, "backgroundFile": "a.bin", "backgroundSession": "shared"], as: Self.share)
                #expect(first.hasPrefix("scheduled "), "\(first)")
                let second = try Self.request(
                    d, ["backgroundDownload": slow, "backgroundFile": "b.bin", "backgroundSession": "shared"], as: Self.share2)
                #expect(second.hasPrefix("refused session-busy"), "\(second)")
                let other = try Self.request(
                    d,
                    [
                        "backgroundDownload": server.base + "/blob/1000", "backgroundFile": "c.bin",
                        "backgroundSession": "its-own",
                    ], as: Self.share2)
                #expect(other.hasPrefix("scheduled "), "\(other)")
            }
        }

        @Test func aFileNameOrARedirectOutOfTheContainerIsRefused() async throws {
            try await Self.withTransfers { d, server in
                for name in ["../escape.bin", "a/b", ".."] {
                    let said = try Self.request(d, ["backgroundDownload": server.base + "/blob/10", "backgroundFile": name])
                    #expect(said.hasPrefix("refused invalid-transfer"), "\(name): \(said)")
                }
                let notHTTP = try Self.request(d, ["backgroundDownload": "file:///etc/hostname", "backgroundFile": "h.bin"])
                #expect(notHTTP.hasPrefix("refused invalid-transfer"), "\(notHTTP)")
                try Self.schedule(
                    d,
                    [
                        "backgroundDownload": server.base + "/redirect?to=file:///etc/hostname",
                        "backgroundFile": "r.bin", "backgroundSession": "redirect",
                    ],
                    untilTheLogShows: "file=r.bin outcome=failed")
                #expect(Self.eventsLog(d).contains("reason=bad-redirect"), "\(Self.eventsLog(d))")
                let names = try FileManager.default.contentsOfDirectory(atPath: Self.groupDirectory(d))
                #expect(!names.contains("r.bin") && !names.contains("escape.bin"), "\(names)")
                #expect(!FileManager.default.fileExists(atPath: d.root + "/state/groups/escape.bin"))
            }
        }

        @Test func anUploadWhoseServerDropsTheConnectionIsRetriedOrFailsWithAReason() async throws {
            try await Self.withTransfers { d, server in
                try Self.schedule(
                    d, ["backgroundUpload": server.base + "/upload/one.txt?drop=1", "backgroundSession": "up1"],
                    untilTheLogShows: "session=up1")
                #expect(Self.eventsLog(d).contains("session=up1 transfer=1 kind=upload file=note-1.txt outcome=completed"), "\(Self.eventsLog(d))")
                let body = server.uploaded("one.txt").map { String(decoding: $0, as: UTF8.self) } ?? ""
                #expect(body.hasPrefix("Note 1\n") && body.contains("background"), "\(body)")

                try Self.schedule(
                    d, ["backgroundUpload": server.base + "/upload/two.txt?drop=99", "backgroundSession": "up2"],
                    untilTheLogShows: "session=up2")
                #expect(Self.eventsLog(d).contains("file=note-2.txt outcome=failed"), "\(Self.eventsLog(d))")
                #expect(Self.eventsLog(d).contains("reason=network-error"), "\(Self.eventsLog(d))")
                #expect(server.uploaded("two.txt") == nil)
            }
        }

        @Test func theQuotaHolds() async throws {
            try await Self.withTransfers { d, server in
                try Self.schedule(
                    d, ["backgroundDownload": server.base + "/blob/2000000", "backgroundFile": "big.bin"],
                    untilTheLogShows: "file=big.bin outcome=failed")
                #expect(Self.eventsLog(d).contains("reason=transfer-quota"), "\(Self.eventsLog(d))")
                #expect(!FileManager.default.fileExists(atPath: Self.groupDirectory(d) + "/big.bin"))
                #expect(!FileManager.default.fileExists(atPath: Self.groupDirectory(d) + "/.big.bin.appex-partial"))
                let rows = try Self.transfers(d)
                #expect(rows.first?["reason"] as? String == "transfer-quota")
            }
        }

        @Test func appexdKilledMidTransferResumesItOnRestart() async throws {
            try await Self.withTransfers { d, server in
                let size = 500_000
                try Self.slowDownload(d, server, size: size, delay: 300, into: "resumed.bin")
                let partial = Self.groupDirectory(d) + "/.resumed.bin.appex-partial"
                func partialSize() -> Int { ((try? FileManager.default.attributesOfItem(atPath: partial))?[.size] as? Int) ?? 0 }
                try #require(Self.eventually(10) { partialSize() >= 100_000 }, "no partial download")
                _ = d.signal(SIGKILL)
                // Its worker dies with it (never two writers of one file).
                #expect(Self.eventually(5) { Self.processes(named: "appex-transfer").isEmpty })
                let kept = partialSize()
                #expect(kept > 0 && kept < size)
                try d.start()
                #expect(
                    Self.eventually(30) { Self.eventsLog(d).contains("file=resumed.bin outcome=completed bytes=\(size)") },
                    "\(Self.eventsLog(d))")
                let file = FileManager.default.contents(atPath: Self.groupDirectory(d) + "/resumed.bin")
                #expect(file.map(Array.init) == TransferTestServer.blob(size))
                #expect(server.requestLog.contains("range=bytes="), "resumed with Range: \(server.requestLog)")
            }
        }

        @Test func aConnectedHostOfTheAppGetsTheEventsInsteadOfTheExtension() async throws {
            try await Self.withTransfers { d, server in
                let host = try HostClient.connect(socketPath: d.socket, identifier: Self.app)
                defer { host.close() }
                let said = try Self.request(
                    d,
                    [
                        "backgroundDownload": server.base + "/blob/5000", "backgroundFile": "h.bin",
                        "backgroundSession": "to-the-host",
                    ])
                #expect(said.hasPrefix("scheduled "), "\(said)")
                let events = await withTaskGroup(of: TransferEvents?.self) { group in
                    group.addTask {
                        for await e in host.transferEvents { return e }
                        return nil
                    }
                    group.addTask {
                        try? await Task.sleep(for: .seconds(20))
                        return nil
                    }
                    let first = await group.next() ?? nil
                    group.cancelAll()
                    return first
                }
                let e = try #require(events, "no events reached the host")
                #expect(e.sessionIdentifier == "to-the-host" && e.bundleIdentifier == Self.share)
                #expect(e.results.map(\.outcome) == [.completed] && e.results.first?.bytes == 5000 && e.results.first?.fileName == "h.bin")
                #expect(!Self.eventsLog(d).contains("to-the-host"))
                #expect(try Self.eventually(5) { (try Self.transfers(d).first?["delivered"] as? Bool) == true })
            }
        }

        /// A worker runs in a cgroup of its own beneath appexd's parent, with a memory and a
        /// task limit the kernel holds it to, gone once the worker is.
        @Test func theWorkerRunsInABoundedCgroupOfItsOwn() async throws {
            try await Self.withTransfers { d, server in
                try Self.slowDownload(d, server, size: 400_000, delay: 1000, into: "bounded.bin")
                // This appexd's worker (other appexds may run workers too), once appexd has put
                // it in its cgroup: it is spawned first, and gets its plan only after.
                func ownWorker() -> Int32? {
                    Self.processes(named: "appex-transfer").first { pid in
                        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
                        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
                        return fields.count > 1 && Int32(fields[1]) == d.pid
                    }
                }
                try #require(Self.eventually(10) { ownWorker() != nil })
                let worker = try #require(ownWorker())
                #expect(Self.eventually(5) { Self.cgroupDirectory(of: worker, controller: "memory")?.hasSuffix("/transfer_1") == true })
                let memory = try #require(Self.cgroupDirectory(of: worker, controller: "memory"), "no memory cgroup for \(worker)")
                #expect(memory.hasSuffix("/transfer_1") && memory.contains(d.cgroupParent), "\(memory)")
                let limit =
                    (try? String(contentsOfFile: memory + "/memory.max", encoding: .utf8))
                    ?? (try? String(contentsOfFile: memory + "/memory.limit_in_bytes", encoding: .utf8))
                #expect(limit?.trimmingCharacters(in: .whitespacesAndNewlines) == "\(128 << 20)")
                let pids = try #require(Self.cgroupDirectory(of: worker, controller: "pids"))
                #expect((try? String(contentsOfFile: pids + "/pids.max", encoding: .utf8))?.hasPrefix("64") == true)
                let cancel = try d.appex(["transfers", "cancel", Self.share])
                #expect(cancel.status == 0, "\(cancel.err)")
                #expect(Self.eventually(20) { !FileManager.default.fileExists(atPath: memory) }, "\(memory) left behind")
                // appexd stopping with a worker running leaves no cgroup either.
                try Self.slowDownload(d, server, size: 400_000, delay: 1000, into: "stopped.bin")
                try #require(Self.eventually(10) { Self.processes(named: "appex-transfer").count > 0 })
                #expect(d.signal(SIGTERM) == 0)
                #expect(d.cgroupPaths.allSatisfy { !FileManager.default.fileExists(atPath: $0) }, "\(d.cgroupPaths) left behind")
            }
        }

        /// The directory of `pid`'s cgroup for `controller` (v1), or its unified cgroup (v2).
        static func cgroupDirectory(of pid: Int32, controller: String) -> String? {
            guard let table = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8) else { return nil }
            for line in table.split(separator: "\n") {
                let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
                guard fields.count == 3 else { continue }
                if fields[1].split(separator: ",").contains(Substring(controller)) {
                    return "/sys/fs/cgroup/\(controller)" + fields[2]
                }
                if fields[0] == "0" && fields[1].isEmpty && FileManager.default.fileExists(atPath: "/sys/fs/cgroup/cgroup.controllers") {
                    return "/sys/fs/cgroup" + fields[2]
                }
            }
            return nil
        }

        /// Any host may name any app in its Hello; only a uid listed for the app under `apps`
        /// takes its events or cancels its transfers. 4242 hosts but does not speak for the app;
        /// 4343 does. Both attack and answer go through `appex transfers` as those uids.
        @Test func onlyAUIDThatSpeaksForTheAppTakesItsEventsOrCancels() async throws {
            let configuration = "hosts: [4242, 4343]\nadmins: []\napps:\n  \(Self.app): [4343]\n"
            try await Self.withTransfers(configuration: configuration) { d, server in
                try Self.slowDownload(d, server, size: 400_000, delay: 1000, into: "claimed.bin")
                try #require(Self.eventually(10) { Self.processes(named: "appex-transfer").count > 0 })
                let session = Self.share + "/dev.appex.examples.share.background"

                let stranger = try d.appex(["transfers", "cancel", session, "--app", Self.app], asUID: 4242)
                #expect(
                    stranger.status == 77  // EX_NOPERM
                        && stranger.err.contains("does not speak for \(Self.app)"),
                    "\(stranger.status) \(stranger.err)")
                #expect(Self.processes(named: "appex-transfer").count > 0, "the stranger's cancel stopped the transfer")

                // The stranger listens first, so it would be the first host in line for the events.
                let thief = try EventsListener(d, uid: 4242)
                defer { thief.stop() }
                #expect(Self.eventually(10) { thief.stderr.contains("waiting for") }, "\(thief.stderr)")
                let owner = try EventsListener(d, uid: 4343)
                defer { owner.stop() }
                #expect(Self.eventually(10) { owner.stderr.contains("waiting for") }, "\(owner.stderr)")

                let cancel = try d.appex(["transfers", "cancel", session, "--app", Self.app], asUID: 4343)
                #expect(cancel.status == 0, "\(cancel.err)")
                #expect(Self.eventually(20) { !owner.isRunning }, "the app's own host got no events")
                let line = try #require(owner.stdout.split(separator: "\n").first, "\(owner.stderr)")
                let events = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let results = try #require(events["results"] as? [[String: Any]])
                #expect(events["bundleIdentifier"] as? String == Self.share)
                #expect(results.map { $0["fileName"] as? String } == ["claimed.bin"] && results.first?["outcome"] as? String == "cancelled")
                #expect(thief.isRunning && thief.stdout.isEmpty, "a host that does not speak for the app got: \(thief.stdout)")
                #expect(!Self.eventsLog(d).contains("claimed.bin"), "delivered to the host, not the extension")
            }
        }

        /// `appex transfers events --app APP --count 1 --json` running as `uid`.
        final class EventsListener: @unchecked Sendable {
            let process = Process()
            let out: String, err: String

            init(_ d: DaemonTests.Daemon, uid: UInt32) throws {
                out = d.root + "/events-\(uid).out"
                err = d.root + "/events-\(uid).err"
                FileManager.default.createFile(atPath: out, contents: nil)
                FileManager.default.createFile(atPath: err, contents: nil)
                process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                process.arguments = [
                    "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", BuiltProducts.path("appex-commands"),
                    "transfers", "events", "--app", BackgroundTransferTests.app, "--count", "1", "--json",
                    "--socket", d.socket,
                ]
                process.standardOutput = FileHandle(forWritingAtPath: out)
                process.standardError = FileHandle(forWritingAtPath: err)
                try process.run()
            }

            var isRunning: Bool { process.isRunning }
            var stdout: String { (try? String(contentsOfFile: out, encoding: .utf8)) ?? "" }
            var stderr: String { (try? String(contentsOfFile: err, encoding: .utf8)) ?? "" }

            func stop() {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
            }
        }

        @Test func anAdministratorCancelsARunningTransfer() async throws {
            try await Self.withTransfers { d, server in
                try Self.slowDownload(d, server, size: 400_000, delay: 1000, into: "cancelled.bin")
                try #require(Self.eventually(10) { Self.processes(named: "appex-transfer").count > 0 })
                let nothing = try d.appex(["transfers", "cancel", Self.share + "/no-such-session"])
                #expect(nothing.status != 0, "\(nothing.out)")
                let cancel = try d.appex(["transfers", "cancel", Self.share + "/" + "dev.appex.examples.share.background"])
                #expect(cancel.status == 0, "\(cancel.err)")
                #expect(Self.eventually(20) { Self.eventsLog(d).contains("file=cancelled.bin outcome=cancelled") }, "\(Self.eventsLog(d))")
                #expect(!FileManager.default.fileExists(atPath: Self.groupDirectory(d) + "/cancelled.bin"))
                #expect(!FileManager.default.fileExists(atPath: Self.groupDirectory(d) + "/.cancelled.bin.appex-partial"))
                // A host that is no administrator cancels only the transfers of an app it speaks
                // for (the CLI, without --app, names none).
                let asHost = try d.appex(["transfers", "cancel", "1"], asUID: 4242)
                #expect(asHost.status != 0 && asHost.err.contains("does not speak for appex-cli"), "\(asHost.err)")
            }
        }

        @Test func theExtensionCancelsItsSession() async throws {
            try await Self.withTransfers { d, server in
                try Self.slowDownload(d, server, size: 400_000, delay: 1000, into: "mine.bin")
                try #require(Self.eventually(10) { Self.processes(named: "appex-transfer").count > 0 })
                let said = try Self.request(d, ["cancelSession": "dev.appex.examples.share.background"])
                #expect(said.hasPrefix("cancel asked"), "\(said)")
                #expect(Self.eventually(20) { Self.eventsLog(d).contains("file=mine.bin outcome=cancelled") }, "\(Self.eventsLog(d))")
                #expect(Self.eventsLog(d).contains("reason=cancelled"))
            }
        }
    }
}
