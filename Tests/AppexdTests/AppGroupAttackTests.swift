import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonTests {
    /// Issue 30, finding 5, the way it was found: an unrelated bare bundle declaring a victim app's
    /// group in its own entitlements shared the group directory. Through the real appexd and CLI,
    /// an admin and a host that are not root (setpriv). What an extension sees is read from its
    /// own view, `/proc/<pid>/root`, as root. Nested in DaemonTests, so it runs serialized with
    /// them: their appexds share a cgroup parent and a uid range, which each one sweeps at start.
    @Suite struct AppGroupAttackTests {
        static let group = "group.shared.x"
        static let victimApp = "dev.appex.tests.victim"
        static let attacker = "dev.appex.tests.attacker.a"
        static let admin: UInt32 = 4243
        static let host: UInt32 = 4242
        static let secret = "the victim's file"

        /// appexd's configuration: uid 4242 hosts, uid 4243 administers, plus `extra`.
        static func configure(_ d: Daemon, _ extra: String = "") throws {
            try Data("hosts: [\(host)]\nadmins: [\(admin)]\n\(extra)".utf8).write(to: URL(fileURLWithPath: d.root + "/appexd.yaml"))
        }

        static func restart(_ d: Daemon, _ extra: String = "") throws {
            _ = d.signal(SIGTERM)
            try configure(d, extra)
            try d.start()
        }

        /// A probe bundle at `path` declaring the group in its Entitlements.plist.
        static func writeProbe(_ d: Daemon, _ path: String, identifier: String) throws {
            _ = try d.writeProbeBundle(at: path, identifier: identifier)
            let entitlements = """
                <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>
                <key>com.apple.security.application-groups</key><array><string>\(group)</string></array></dict></plist>
                """
            try Data(entitlements.utf8).write(to: URL(fileURLWithPath: path + "/Entitlements.plist"))
        }

        /// `Victim.app` with plug-ins named `names` (identifier `<app>.<name>`), all declaring the group.
        static func writeVictim(_ d: Daemon, plugIns names: [String]) throws -> String {
            let app = d.root + "/src/Victim.app"
            try? FileManager.default.removeItem(atPath: app)
            for name in names { try writeProbe(d, app + "/PlugIns/\(name).appex", identifier: victimApp + "." + name) }
            return try BareBundle.writeInfoPlist(.app(victimApp, version: "1"), in: app)
        }

        /// What the group directory holds as `identifier` sees it: nil when its view has no such
        /// directory. Asks through the CLI as the host uid, then reads the idle instance's view.
        static func groupAsSeenBy(_ d: Daemon, _ identifier: String) throws -> [String]? {
            let r = try d.appex(["request", identifier, "--text", "hello"], asUID: host)
            try #require(r.status == 0, "request \(identifier): \(r.err)")
            let pid = try #require(probePID(of: identifier), "no running probe of \(identifier)")
            let dir = "/proc/\(pid)/root/var/appex/groups/\(group)"
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory), isDirectory.boolValue else { return nil }
            return try FileManager.default.contentsOfDirectory(atPath: dir).sorted().map { name in
                name + "=" + ((try? String(contentsOfFile: dir + "/" + name, encoding: .utf8)) ?? "?")
            }
        }

        /// The probe process appexd launched for `identifier` (its environment names it).
        static func probePID(of identifier: String) -> Int32? {
            let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
            return pids.first { pid in
                guard (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) == "probe\n",
                    let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ")
                else { return false }
                return environ.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == "APPEX_BUNDLE_IDENTIFIER=" + identifier }
            }
        }

        @Test(.requiresRoot("appexd needs root")) func anUnrelatedBundleCannotJoinAnotherAppsGroupByDeclaringIt() async throws {
            let d = try Daemon()
            defer { d.cleanUp() }
            try Self.configure(d)
            try d.start()
            let admin = Self.admin

            // The victim installs, runs, and has a file in its group.
            let victim = try Self.writeVictim(d, plugIns: ["v"])
            let installed = try d.appex(["install", victim], asUID: admin)
            try #require(installed.status == 0, "\(installed.err)")
            #expect(try d.appex(["enable", Self.victimApp + ".v"], asUID: admin).status == 0)
            #expect(try Self.groupAsSeenBy(d, Self.victimApp + ".v") == [])
            let groupDirectory = d.root + "/state/groups/" + Self.group
            try Data(Self.secret.utf8).write(to: URL(fileURLWithPath: groupDirectory + "/secret"))

            // The attack: a bare bundle declaring the same group. Refused, saying why and whose it is.
            let bare = d.root + "/src/A.appex"
            try Self.writeProbe(d, bare, identifier: Self.attacker)
            let refused = try d.appex(["install", bare], asUID: admin)
            #expect(refused.status == 65, "an invalid bundle: EX_DATAERR")
            for needle in ["install.app-group", "\"\(Self.group)\"", "bare bundle \"\(Self.attacker)\"", "containing app \"\(Self.victimApp)\""] {
                #expect(refused.err.contains(needle), "\(needle) missing from: \(refused.err)")
            }
            #expect(try !d.appex(["list"], asUID: admin).out.contains(Self.attacker))
            #expect(!FileManager.default.fileExists(atPath: d.root + "/state/bundles/" + Self.attacker))

            // A second extension of the same app shares the group.
            let both = try d.appex(["install", try Self.writeVictim(d, plugIns: ["v", "w"])], asUID: admin)
            try #require(both.status == 0, "\(both.err)")
            #expect(try d.appex(["enable", Self.victimApp + ".w"], asUID: admin).status == 0)
            #expect(try Self.groupAsSeenBy(d, Self.victimApp + ".w") == ["secret=" + Self.secret])

            // Granted in appexd's configuration, the bare bundle is accepted and shares it.
            try Self.restart(d, "appGroups:\n  \(Self.group): [\(Self.attacker)]\n")
            let granted = try d.appex(["install", bare], asUID: admin)
            try #require(granted.status == 0, "\(granted.err)")
            #expect(try d.appex(["enable", Self.attacker], asUID: admin).status == 0)
            #expect(try Self.groupAsSeenBy(d, Self.attacker) == ["secret=" + Self.secret])

            // The grant withdrawn: enable refuses, and the still-enabled bundle launches without it.
            try Self.restart(d)
            let reenable = try d.appex(["enable", Self.attacker], asUID: admin)
            #expect(reenable.status == 1)
            #expect(reenable.err.contains("app-group-refused") && reenable.err.contains("\"\(Self.group)\""), "\(reenable.err)")
            #expect(try Self.groupAsSeenBy(d, Self.attacker) == nil)
            #expect(try Self.groupAsSeenBy(d, Self.victimApp + ".v") == ["secret=" + Self.secret])
        }
    }
}
