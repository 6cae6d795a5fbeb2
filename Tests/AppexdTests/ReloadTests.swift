import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// SIGHUP (`systemctl reload appexd`): appexd reads its configuration file again, applies what
/// it can live, keeps the rest for a restart, and keeps everything when the file is wrong;
/// systemd hears `RELOADING=1`, then `READY=1`.
@Suite(.serialized) struct ReloadTests {
    /// appexd with a notification socket, its log in a file, uid 4242 a host (DaemonTests.Daemon).
    func withDaemon(
        _ prepare: (DaemonTests.Daemon) throws -> Void = { _ in },
        _ body: (DaemonTests.Daemon, Int32) async throws -> Void
    ) async throws {
        try RequiresRoot.check("appexd needs root")
        let d = try DaemonTests.Daemon(tag: "reload")
        defer { d.cleanUp() }
        let notify = try WatchdogTests.notifySocket(d.root + "/notify")
        defer { close(notify) }
        d.environment = ["NOTIFY_SOCKET": d.root + "/notify"]
        d.logPath = d.root + "/appexd.log"
        try prepare(d)
        try d.start()
        try #require(WatchdogTests.receive(notify, until: "READY=1", seconds: 10) != nil, "appexd never said READY=1")
        try await body(d, notify)
    }

    func write(_ d: DaemonTests.Daemon, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: d.root + "/appexd.yaml"))
    }

    /// SIGHUP, then what appexd told systemd once it was ready again.
    func reload(_ d: DaemonTests.Daemon, _ notify: Int32) throws -> String {
        kill(try #require(d.pid), SIGHUP)
        try #require(WatchdogTests.receive(notify, until: "RELOADING=1", seconds: 10) != nil, "no RELOADING=1")
        return try #require(WatchdogTests.receive(notify, until: "READY=1", seconds: 30), "no READY=1 after RELOADING=1")
    }

    func log(_ d: DaemonTests.Daemon) -> String { (try? String(contentsOfFile: d.root + "/appexd.log", encoding: .utf8)) ?? "" }

    @Test func hostsAndAdminsChangeForTheNextMessage() async throws {
        try await withDaemon { d, notify in
            let id = try d.installProbe()
            #expect(try d.appex(["request", id, "--text", "hi"], asUID: 4242).status == 0)
            let before = try d.appex(["list"], asUID: 4343)
            #expect(before.status != 0 && before.err.contains("not-authorized"), "\(before.err)")

            try write(d, "hosts: [4343]\nadmins: [4343]\n")
            let status = try reload(d, notify)
            #expect(status.contains("applied hosts, admins"), "\(status)")

            let list = try d.appex(["list"], asUID: 4343)
            #expect(list.status == 0 && list.out.contains(id), "\(list.out) \(list.err)")
            #expect(try d.appex(["request", id, "--text", "hi"], asUID: 4343).status == 0)
            let revoked = try d.appex(["request", id, "--text", "hi"], asUID: 4242)
            #expect(revoked.status != 0 && revoked.err.contains("not-authorized"), "\(revoked.err)")
            #expect(d.process?.isRunning == true)
        }
    }

    @Test func aBrokenFileKeepsTheConfigurationInForce() async throws {
        try await withDaemon { d, notify in
            let id = try d.installProbe()
            try write(d, "hosts: [4343]\nadmins: [4343]\nclients:\n  connections: many\n")
            let status = try reload(d, notify)
            #expect(status.contains("reload failed"), "\(status)")
            // The error names the file and the line of the bad value.
            #expect(log(d).contains(d.root + "/appexd.yaml:4"), "\(log(d))")
            // Nothing of the broken file applied: 4242 still hosts, 4343 is still nobody.
            #expect(try d.appex(["request", id, "--text", "still"], asUID: 4242).status == 0)
            let stranger = try d.appex(["list"], asUID: 4343)
            #expect(stranger.status != 0 && stranger.err.contains("not-authorized"), "\(stranger.err)")
            #expect(d.process?.isRunning == true)
        }
    }

    @Test func aChangedSocketNeedsARestart() async throws {
        let moved = { (d: DaemonTests.Daemon) in d.root + "/moved.sock" }
        try await withDaemon({ d in
            d.passSocket = false
            try write(d, "hosts: [4242]\nadmins: []\nsocket: \(d.socket)\n")
        }) { d, notify in
            try write(d, "hosts: [4242, 4343]\nadmins: []\nsocket: \(moved(d))\n")
            let status = try reload(d, notify)
            #expect(status.contains("applied hosts") && status.contains("needs a restart: socket"), "\(status)")
            #expect(log(d).contains("socket changed in \(d.root)/appexd.yaml; it needs a restart"), "\(log(d))")
            // Served where it was; the hosts did change.
            #expect(!FileManager.default.fileExists(atPath: moved(d)))
            #expect(try d.appex(["list"]).status == 0)
            let host = try d.appex(["request", "dev.appex.tests.none", "--text", "x"], asUID: 4343)
            #expect(!host.err.contains("not-authorized"), "\(host.err)")
        }
    }

    /// A policy overlay for the probe's extension point with `hard` as its active hard limit.
    static func overlay(_ dir: String, hard: String) throws {
        try FileManager.default.createDirectory(atPath: dir + "/extension-points", withIntermediateDirectories: true)
        let yaml = """
            extensionPoints: [dev.appex.tests.reload]
            title: Reload tests
            memory:
              activeSoftLimit: \(hard)
              activeHardLimit: \(hard)
              inactiveSoftLimit: \(hard)
              inactiveHardLimit: \(hard)
              pageCacheAllowance: 16MiB

            """
        try Data(yaml.utf8).write(to: URL(fileURLWithPath: dir + "/extension-points/reload.yaml"))
    }

    /// The probe's active hard limit as appexd reports it (`appex jetsam --json`).
    func hardLimit(_ d: DaemonTests.Daemon) throws -> Int? {
        let j = try d.appex(["jetsam", "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(j.out.utf8)) as? [String: Any]
        return (report?["extensions"] as? [[String: Any]])?.first?["activeHardLimitBytes"] as? Int
    }

    @Test func policiesApplyAtTheNextLaunch() async throws {
        let overlay = { (d: DaemonTests.Daemon) in d.root + "/policies" }
        try await withDaemon({ d in
            try Self.overlay(overlay(d), hard: "200MiB")
            d.extraArguments = ["--policies", overlay(d), "--no-system-pressure"]
        }) { d, notify in
            let bundle = try d.writeProbeBundle(identifier: "dev.appex.tests.reload.probe", point: "dev.appex.tests.reload")
            #expect(try d.appex(["install", bundle]).status == 0)
            #expect(try d.appex(["enable", "dev.appex.tests.reload.probe"]).status == 0)
            #expect(try d.appex(["request", "dev.appex.tests.reload.probe", "--text", "a"]).status == 0)
            #expect(try hardLimit(d) == 200 << 20)

            try Self.overlay(overlay(d), hard: "150MiB")
            let status = try reload(d, notify)
            #expect(status.contains("reloaded"), "\(status)")
            // The next launch (the instance ended by disable and enable) has the new policy.
            #expect(try d.appex(["disable", "dev.appex.tests.reload.probe"]).status == 0)
            #expect(try d.appex(["enable", "dev.appex.tests.reload.probe"]).status == 0)
            #expect(try d.appex(["request", "dev.appex.tests.reload.probe", "--text", "b"]).status == 0)
            #expect(try hardLimit(d) == 150 << 20)
        }
    }
}
