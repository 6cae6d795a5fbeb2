import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 30, finding 6, as it was found, through the real appexd and CLI: `appex install`
/// must not publish a file its owner kept private, nor copy for an administrator what that
/// administrator could not read. Part of `DaemonTests` (serialized with its daemons, which
/// share a cgroup parent).
extension DaemonTests {
    static let admin: UInt32 = 4444
    static let victim: UInt32 = 4545
    static let probeID = "dev.appex.tests.daemon.probe"

    /// appexd with uid 4444 as a (non-root) administrator and 4242 as a host.
    func withAdminDaemon(_ body: (Daemon) async throws -> Void) async throws {
        try RequiresRoot.check("appexd needs root")
        let d = try Daemon()
        defer { d.cleanUp() }
        try Data("hosts: [4242]\nadmins: [\(Self.admin)]\n".utf8).write(to: URL(fileURLWithPath: d.root + "/appexd.yaml"))
        try d.start()
        try await body(d)
    }

    func mode(_ path: String) -> mode_t? {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & 0o7777 : nil
    }

    /// Runs a command to its end; its status and output.
    static func run(_ command: [String]) throws -> (status: Int32, out: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: command[0])
        p.arguments = Array(command.dropFirst())
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let said = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: said, as: UTF8.self))
    }

    func installedCopy(_ d: Daemon) -> String { d.root + "/state/bundles/\(Self.probeID)/1/Probe.appex" }

    /// Root installs a bundle holding a root-only file: the installed copy is root-only too
    /// (it was published 0644 before), and no bit is added anywhere.
    @Test func aPrivateFileStaysPrivateWhenRootInstallsIt() async throws {
        try await withAdminDaemon { d in
            let bundle = try d.writeProbeBundle()
            try Data("root's alone\n".utf8).write(to: URL(fileURLWithPath: bundle + "/secret"))
            #expect(chmod(bundle + "/secret", 0o600) == 0)
            #expect(chmod(bundle + "/probe", 0o750) == 0)
            let installed = try d.appex(["install", bundle])
            #expect(installed.status == 0, "\(installed.err)")
            #expect(mode(installedCopy(d) + "/secret") == 0o600)
            #expect(mode(installedCopy(d) + "/probe") == 0o750)
            #expect(mode(installedCopy(d) + "/Info.plist") == 0o644)
            // Another uid cannot read it.
            let cat = try Self.run([
                "/usr/bin/setpriv", "--reuid=4343", "--regid=4343", "--clear-groups",
                "/bin/cat", installedCopy(d) + "/secret",
            ])
            #expect(cat.status != 0 && !cat.out.contains("root's alone"), "\(cat)")
        }
    }

    /// A non-root administrator names a bundle inside another user's 0700 directory: appexd
    /// resolves the path as that administrator, so it is refused, saying where, and nothing
    /// is copied. (appexd followed it as root before, and copied the tree.)
    @Test func anAdministratorCannotInstallAnotherUsersPrivateTree() async throws {
        try await withAdminDaemon { d in
            let home = d.root + "/victim"
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            let bundle = try d.writeProbeBundle()
            try FileManager.default.moveItem(atPath: bundle, toPath: home + "/Probe.appex")
            #expect(chown(home, Self.victim, Self.victim) == 0 && chmod(home, 0o700) == 0)

            let refused = try d.appex(["install", home + "/Probe.appex"], asUID: Self.admin)
            #expect(refused.status != 0)
            #expect(refused.err.contains(home) && refused.err.contains("Permission denied"), "\(refused.err)")
            #expect(try d.appex(["list"]).out.contains(Self.probeID) == false)
            #expect(!FileManager.default.fileExists(atPath: d.root + "/state/bundles/\(Self.probeID)"))
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: d.root + "/state/bundles/.staging")) ?? []).isEmpty)
        }
    }

    /// In a tree the administrator may read, a single file they may not is refused by name;
    /// readable, the same bundle installs (the refusal was for that file alone).
    @Test func anAdministratorCannotInstallAFileTheyCannotRead() async throws {
        try await withAdminDaemon { d in
            let bundle = try d.writeProbeBundle()
            try Data("root's alone\n".utf8).write(to: URL(fileURLWithPath: bundle + "/secret"))
            #expect(chmod(bundle + "/secret", 0o600) == 0)

            let refused = try d.appex(["install", bundle], asUID: Self.admin)
            #expect(refused.status != 0)
            #expect(refused.err.contains("install.unreadable") && refused.err.contains("secret"), "\(refused.err)")
            #expect(!FileManager.default.fileExists(atPath: d.root + "/state/bundles/\(Self.probeID)"))

            #expect(chmod(bundle + "/secret", 0o644) == 0)
            let installed = try d.appex(["install", bundle], asUID: Self.admin)
            #expect(installed.status == 0, "\(installed.err)")
            #expect(mode(installedCopy(d) + "/secret") == 0o644)
        }
    }

    /// The state appexd keeps: bundles/ lists nothing to others, the database is root's alone.
    @Test func theRegistrysFilesAreNotOpenToOthers() async throws {
        try await withAdminDaemon { d in
            #expect(try d.appex(["install", try d.writeProbeBundle()]).status == 0)
            #expect(mode(d.root + "/state/bundles") == 0o711)
            for suffix in ["", "-wal", "-shm"] {
                let path = d.root + "/state/registry.sqlite" + suffix
                #expect(mode(path) == 0o600, "\(path)")
            }
            let list = try Self.run([
                "/usr/bin/setpriv", "--reuid=4343", "--regid=4343", "--clear-groups",
                "/bin/ls", d.root + "/state/bundles",
            ])
            #expect(list.status != 0 && !list.out.contains(Self.probeID), "\(list)")
        }
    }
}
