import AppexBundle
import AppexTestSupport
import CAppexLinux
import Foundation
import Testing

@testable import AppexRegistry

#if canImport(Glibc)
import Glibc
#endif

/// An install on behalf of a non-root user reads its source with that user's identity
/// (`InstallOptions.requester`), and what it writes is never more open than what it read.
@Suite("Registry install as the requester")
struct InstallIdentityTests {
    static let user = FileIdentity(uid: 4646, gid: 4646)
    static let otherUser: UInt32 = 4747
    static let group: UInt32 = 4848

    /// A scratch directory the requester may search (it is 0700 when made).
    func scratch() throws -> Scratch {
        try RequiresRoot.check("installing on behalf of another uid needs root")
        let scratch = try Scratch()
        #expect(chmod(scratch.path, 0o755) == 0)
        return scratch
    }

    func options(_ requester: FileIdentity) -> InstallOptions { InstallOptions(requester: requester) }

    /// What an install left under bundles/ besides its own bookkeeping.
    func installedNames(_ registry: Registry) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: registry.bundlesDirectory)) ?? [])
            .filter { $0 != ".staging" && $0 != ".lock" }
            + ((try? FileManager.default.contentsOfDirectory(atPath: registry.bundlesDirectory + "/.staging")) ?? [])
    }

    @Test("a file the requester cannot read is refused, naming it, and nothing is copied")
    func unreadableFileIsRefused() throws {
        let scratch = try scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        try scratch.write("src/Share.appex/Resources/secret.txt", "root's alone", mode: 0o600)
        let registry = try Registry(stateDirectory: scratch.state)

        let error = #expect(throws: RegistryError.self) { try registry.install(path: source, options: options(Self.user)) }
        guard case .invalidBundle(_, let bundles)? = error else {
            Issue.record("expected invalidBundle, got \(String(describing: error))")
            return
        }
        let finding = try #require(bundles.flatMap(\.findings).first)
        #expect(finding.code == "install.unreadable")
        #expect("\(finding)".contains("Resources/secret.txt") && "\(finding)".contains("Permission denied"), "\(finding)")
        #expect(try registry.list().isEmpty)
        #expect(installedNames(registry).isEmpty)
        // Root itself still installs it, and the copy stays root's alone.
        let installed = try registry.install(path: source).extensions[0]
        #expect(fileStat(installed.bundlePath + "/Resources/secret.txt")!.st_mode & 0o7777 == 0o600)
    }

    @Test("a source inside a directory the requester cannot search is refused")
    func privateDirectoryIsRefused() throws {
        let scratch = try scratch()
        let source = try scratch.makeAppex("private/Share.appex", identifier: "com.example.share")
        #expect(chown(scratch.sub("private"), Self.otherUser, Self.otherUser) == 0)
        #expect(chmod(scratch.sub("private"), 0o700) == 0)
        let registry = try Registry(stateDirectory: scratch.state)

        let error = #expect(throws: RegistryError.self) { try registry.install(path: source, options: options(Self.user)) }
        guard case .unusableSource(let path, let problem)? = error else {
            Issue.record("expected unusableSource, got \(String(describing: error))")
            return
        }
        #expect(path == source)
        #expect(problem.contains(scratch.sub("private")) && problem.contains("Permission denied"), "\(problem)")
        #expect(try registry.list().isEmpty)
        #expect(installedNames(registry).isEmpty)
    }

    @Test("what the requester reads through a supplementary group is installed, its modes kept")
    func supplementaryGroupsCount() throws {
        let scratch = try scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        try scratch.write("src/Share.appex/Resources/team.txt", "the team's", mode: 0o640)
        #expect(chown(source + "/Resources/team.txt", 0, Self.group) == 0)
        let registry = try Registry(stateDirectory: scratch.state)

        // Without the group: refused.
        #expect(throws: RegistryError.self) { try registry.install(path: source, options: options(Self.user)) }
        // With it: installed, as 0640 (no bit added, owned by root).
        let member = FileIdentity(uid: Self.user.uid, gid: Self.user.gid, groups: [Self.group])
        let installed = try registry.install(path: source, options: options(member)).extensions[0]
        let copy = try #require(fileStat(installed.bundlePath + "/Resources/team.txt"))
        #expect(copy.st_mode & 0o7777 == 0o640 && copy.st_uid == 0 && copy.st_gid == 0)
        #expect(try scratch.read(installed.bundlePath + "/Resources/team.txt") == "the team's")
    }

    @Test("the identity is taken on one thread for one call and given back")
    func theIdentityIsTheThreadsAlone() throws {
        let scratch = try scratch()
        try scratch.write("secret", "root's alone", mode: 0o600)
        let ownGroups = getgroups(0, nil)
        let reader = try ThreadFileIdentity(Self.user)
        let asUser = try reader { open(scratch.sub("secret"), O_RDONLY | O_CLOEXEC) }
        #expect(asUser < 0 && errno == EACCES)
        // Given back: root reads it again on this thread, with its own groups.
        let asRoot = open(scratch.sub("secret"), O_RDONLY | O_CLOEXEC)
        #expect(asRoot >= 0)
        close(asRoot)
        #expect(appex_thread_setfsuid(UInt32.max) == 0 && appex_thread_setfsgid(UInt32.max) == 0)
        #expect(getgroups(0, nil) == ownGroups)
        // A thread that was there before is never the user meanwhile (one made meanwhile
        // would inherit the identity: the calls under it make none).
        final class Seen: @unchecked Sendable { var fsuid: UInt32 = 1 }  // written before the signal, read after
        let seen = Seen()
        let ask = DispatchSemaphore(value: 0), answered = DispatchSemaphore(value: 0)
        Thread {
            ask.wait()
            seen.fsuid = appex_thread_setfsuid(UInt32.max)
            answered.signal()
        }.start()
        try reader {
            ask.signal()
            answered.wait()
        }
        #expect(seen.fsuid == 0)
    }

    @Test("bundles/ is 0711, the database and its WAL files 0600, wider ones tightened")
    func stateModes() throws {
        let scratch = try scratch()
        do {
            let registry = try Registry(stateDirectory: scratch.state)
            try registry.install(path: try scratch.makeAppex("src/Share.appex", identifier: "com.example.share"))
            #expect(fileStat(registry.bundlesDirectory)!.st_mode & 0o7777 == 0o711)
            for suffix in ["", "-wal", "-shm"] {
                let st = try #require(fileStat(registry.databasePath + suffix), "no \(Registry.databaseName)\(suffix)")
                #expect(st.st_mode & 0o7777 == 0o600, "\(suffix)")
            }
        }
        // As an older version left them.
        #expect(chmod(scratch.state + "/bundles", 0o755) == 0)
        for suffix in ["", "-wal", "-shm"] where fileStat(scratch.state + "/" + Registry.databaseName + suffix) != nil {
            #expect(chmod(scratch.state + "/" + Registry.databaseName + suffix, 0o644) == 0)
        }
        let reopened = try Registry(stateDirectory: scratch.state)
        #expect(try reopened.list().count == 1)
        #expect(fileStat(reopened.bundlesDirectory)!.st_mode & 0o7777 == 0o711)
        for suffix in ["", "-wal", "-shm"] {
            if let st = fileStat(reopened.databasePath + suffix) {
                #expect(st.st_mode & 0o7777 == 0o600, "\(suffix)")
            }
        }
    }
}
