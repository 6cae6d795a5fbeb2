import AppexBundle
import Foundation
import GRDB
import Testing

@testable import AppexRegistry

#if canImport(Glibc)
import Glibc
#endif

@Suite("Registry install")
struct InstallTests {
    @Test("a bare .appex is copied, root-owned, disabled, and listed")
    func bareAppex() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share", name: "Sharer")
        let registry = try Registry(stateDirectory: scratch.state)

        let result = try registry.install(path: source)
        #expect(result.app == nil)
        #expect(result.extensions.count == 1)
        let installed = try #require(result.extensions.first)
        #expect(installed.bundleIdentifier == "com.example.share")
        #expect(installed.extensionPoint == "com.apple.share-services")
        #expect(installed.displayName == "Sharer")
        #expect(installed.version == "7" && installed.shortVersion == "1.2")
        #expect(installed.executable == "run")
        #expect(installed.isEnabled == false)
        #expect(installed.generation == 1)
        #expect(installed.containingAppIdentifier == nil)
        #expect(installed.sourcePath == source)
        #expect(installed.bundlePath == scratch.state + "/bundles/com.example.share/1/Share.appex")
        #expect(installed.contentDigest.hasPrefix("fnv1a64:") && installed.contentDigest.count == 24)

        #expect(try scratch.read(installed.bundlePath + "/Resources/data.txt") == "payload")
        let exe = try #require(fileStat(installed.bundlePath + "/run"))
        #expect(exe.st_mode & 0o7777 == 0o755)
        #expect(exe.st_uid == 0 && exe.st_gid == 0)
        let data = try #require(fileStat(installed.bundlePath + "/Resources/data.txt"))
        #expect(data.st_mode & 0o7777 == 0o644)
        let dir = try #require(fileStat(installed.bundlePath + "/Resources"))
        #expect(dir.st_mode & 0o7777 == 0o755 && dir.st_uid == 0)

        #expect(try registry.list() == [installed])
        #expect(try registry.extension(bundleIdentifier: "com.example.share") == installed)
        #expect(try registry.apps().isEmpty)
        #expect(try registry.integrityProblems() == [])
        #expect(scratch.names(in: registry.bundlesDirectory + "/.staging").isEmpty)
    }

    @Test("the database is WAL with foreign keys and the schema migrated")
    func databaseSettings() throws {
        let scratch = try Scratch()
        let registry = try Registry(stateDirectory: scratch.state)
        let (mode, foreignKeys, synchronous, migrations, tables) = try registry.database.read { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA foreign_keys"),
                try Int.fetchOne(db, sql: "PRAGMA synchronous"),
                try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"),
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            )
        }
        #expect(mode == "wal")
        #expect(foreignKeys == 1)
        #expect(synchronous == 2)  // FULL
        #expect(
            migrations == [
                "v1: apps and extensions", "v2: history", "v3: termination band, footprint, trigger to death",
                "v4: app group owners", "v5: termination time in microseconds", "v6: background transfers",
            ])
        #expect(tables.contains("app") && tables.contains("extension") && tables.contains("transfer"))
        #expect(FileManager.default.fileExists(atPath: scratch.state + "/registry.sqlite"))
    }

    @Test("a containing app installs each PlugIns/*.appex, nothing else of the app")
    func containingApp() throws {
        let scratch = try Scratch()
        let source = try scratch.makeApp(
            "src/Host.app", identifier: "com.example.host",
            plugIns: ["com.example.host.share", "com.example.host.action"])
        try scratch.write("src/Host.app/PlugIns/README.txt", "not a bundle")
        let registry = try Registry(stateDirectory: scratch.state)

        let result = try registry.install(path: source)
        #expect(result.extensions.map(\.bundleIdentifier) == ["com.example.host.action", "com.example.host.share"])
        #expect(result.extensions.allSatisfy { $0.containingAppIdentifier == "com.example.host" && !$0.isEnabled })
        #expect(result.extensions.map(\.sourcePath) == [source + "/PlugIns/action.appex", source + "/PlugIns/share.appex"])
        #expect(
            result.extensions.map(\.bundlePath) == [
                scratch.state + "/bundles/com.example.host.action/1/action.appex",
                scratch.state + "/bundles/com.example.host.share/1/share.appex",
            ])
        let app = try #require(result.app)
        #expect(app.bundleIdentifier == "com.example.host" && app.displayName == "Host" && app.version == "3")
        #expect(app.sourcePath == source)
        #expect(app.extensionIdentifiers == ["com.example.host.action", "com.example.host.share"])
        #expect(try registry.apps() == [app])
        // Only the plug-ins are copied: the app's own binary and stray files are not.
        #expect(
            scratch.names(in: registry.bundlesDirectory).filter { !$0.hasPrefix(".") }
                == ["com.example.host.action", "com.example.host.share"])
        #expect(try registry.integrityProblems() == [])
    }

    @Test("one digest for a bundle whether installed bare or from an app")
    func digestIndependentOfSource() throws {
        let scratch = try Scratch()
        let app = try scratch.makeApp("a/Host.app", identifier: "com.example.host", plugIns: ["com.example.host.share"])
        let bare = try scratch.makeAppex("b/share.appex", identifier: "com.example.host.share")
        let first = try Registry(stateDirectory: scratch.sub("state1")).install(path: app).extensions[0].contentDigest
        let second = try Registry(stateDirectory: scratch.sub("state2")).install(path: bare).extensions[0].contentDigest
        #expect(first == second)
        try scratch.write("b/share.appex/Resources/data.txt", "payloaD")
        let third = try Registry(stateDirectory: scratch.sub("state3")).install(path: bare).extensions[0].contentDigest
        #expect(third != first)
    }

    @Test("an invalid bundle is refused with its findings and key paths; nothing is installed")
    func invalidBundle() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Broken.appex", identifier: "com.example.broken")
        #expect(unlink(source + "/run") == 0)
        let registry = try Registry(stateDirectory: scratch.state)

        let bundles = try #require(refusal { try registry.install(path: source) })
        #expect(bundles.map(\.path) == [source])
        let missing = try #require(bundles[0].findings.first { $0.code == "executable.missing" })
        #expect(missing.severity == .error)
        #expect(missing.keyPath.description == "CFBundleExecutable")
        #expect(missing.message.contains("\"run\""))
        #expect(try registry.list().isEmpty)
        #expect(bundlesAreEmpty(registry))
    }

    @Test("a plug-in outside its app's identifier refuses the whole app, naming that plug-in")
    func wrongPrefixRefusesApp() throws {
        let scratch = try Scratch()
        let source = try scratch.makeApp("src/Host.app", identifier: "com.example.host", plugIns: ["com.example.host.share"])
        try scratch.makeAppex("src/Host.app/PlugIns/Rogue.appex", identifier: "com.other.rogue")
        let registry = try Registry(stateDirectory: scratch.state)

        let bundles = try #require(refusal { try registry.install(path: source) })
        #expect(bundles.map(\.path) == [source + "/PlugIns/Rogue.appex"])
        #expect(bundles[0].findings.map(\.code) == ["bundle.identifier-prefix"])
        #expect(bundles[0].findings[0].keyPath.description == "CFBundleIdentifier")
        #expect(try registry.list().isEmpty && registry.apps().isEmpty)
        #expect(bundlesAreEmpty(registry))
    }

    @Test("an app without plug-ins, or with a broken Info.plist, is refused")
    func appProblems() throws {
        let scratch = try Scratch()
        try scratch.write("empty/Host.app/Info.plist", appInfoPlistXML(identifier: "com.example.host"))
        try FileManager.default.createDirectory(atPath: scratch.sub("empty/Host.app/PlugIns"), withIntermediateDirectories: true)
        try scratch.makeApp("bad/Host.app", identifier: "com.example.host", plugIns: ["com.example.host.share"])
        try scratch.write("bad/Host.app/Info.plist", "<plist><dict><key>")
        let registry = try Registry(stateDirectory: scratch.state)

        let empty = try #require(refusal { try registry.install(path: scratch.sub("empty/Host.app")) })
        #expect(empty.flatMap(\.findings).map(\.code) == ["install.no-plugins"])
        let bad = try #require(refusal { try registry.install(path: scratch.sub("bad/Host.app")) })
        let malformed = try #require(bad.flatMap(\.findings).first { $0.code == "plist.malformed" })
        // The message names the source file, not the staged copy.
        #expect(malformed.message.contains(scratch.sub("bad/Host.app/Info.plist")))
        #expect(!malformed.message.contains(".staging"))

        let bare = try scratch.makeAppex("bare/Share.appex", identifier: "com.example.share")
        try scratch.write("bare/Share.appex/Info.plist", "<plist><dict><key>")
        let refused = try #require(refusal { try registry.install(path: bare) })
        #expect(refused.map(\.path) == [bare])
        #expect(refused[0].findings.map(\.code) == ["plist.malformed"])
        #expect(refused[0].findings[0].keyPath.description == "Info.plist")
        #expect(refused[0].findings[0].message.contains(bare + "/Info.plist"))
        #expect(!refused[0].findings[0].message.contains(".staging"))
        #expect(bundlesAreEmpty(registry))
    }

    @Test("additional checks and extra extension points take part in validation")
    func installOptions() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Kiosk.appex", identifier: "com.example.kiosk", point: "org.example.kiosk-panel")
        let registry = try Registry(stateDirectory: scratch.state)

        let unknown = try #require(refusal { try registry.install(path: source) })
        #expect(unknown[0].findings.map(\.code) == ["extension.unknown-point"])
        let vetoed = try #require(
            refusal {
                try registry.install(
                    path: source,
                    options: InstallOptions(extraExtensionPoints: ["org.example.kiosk-panel"]) { bundle in
                        [.error("policy.test", at: "NSExtension", "vetoed \(bundle.info.bundleIdentifier ?? "?")")]
                    })
            })
        #expect(vetoed[0].findings.map(\.message) == ["vetoed com.example.kiosk"])
        let installed = try registry.install(path: source, options: InstallOptions(extraExtensionPoints: ["org.example.kiosk-panel"]))
        #expect(installed.extensions.map(\.extensionPoint) == ["org.example.kiosk-panel"])
    }

    @Test("edits to the source after install do not reach the installed copy")
    func sourceEditsDoNotLeak() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        let registry = try Registry(stateDirectory: scratch.state)
        let installed = try registry.install(path: source).extensions[0]

        try scratch.write("src/Share.appex/run", "#!/bin/sh\nrm -rf /nonexistent-appex-test\n", mode: 0o755)
        try scratch.write("src/Share.appex/Resources/data.txt", "changed")
        try scratch.write("src/Share.appex/Resources/new.txt", "new")
        #expect(chmod(source + "/Resources/data.txt", 0o4777) == 0)

        #expect(try scratch.read(installed.bundlePath + "/run") == "#!/bin/sh\necho hello\n")
        #expect(try scratch.read(installed.bundlePath + "/Resources/data.txt") == "payload")
        #expect(!FileManager.default.fileExists(atPath: installed.bundlePath + "/Resources/new.txt"))
        #expect(fileStat(installed.bundlePath + "/Resources/data.txt")!.st_mode & 0o7777 == 0o644)
        #expect(try registry.extension(bundleIdentifier: "com.example.share").contentDigest == installed.contentDigest)
        #expect(try registry.integrityProblems() == [])
    }

    @Test("a changed installed copy is reported by integrityProblems")
    func tamperedCopyDetected() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        let registry = try Registry(stateDirectory: scratch.state)
        let installed = try registry.install(path: source).extensions[0]
        try Data("tampered".utf8).write(to: URL(fileURLWithPath: installed.bundlePath + "/Resources/data.txt"))

        let problems = try registry.integrityProblems()
        #expect(problems.count == 1)
        #expect(problems.first?.contains("com.example.share") == true)
        #expect(problems.first?.contains(installed.contentDigest) == true)
    }

    @Test("setuid, setgid, sticky and group/other write bits are dropped, no bit is added")
    func modes() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        #expect(chmod(source + "/run", 0o6711) == 0)
        try scratch.write("src/Share.appex/Resources/private.txt", "p", mode: 0o600)
        try scratch.write("src/Share.appex/tool", "#!/bin/sh\n", mode: 0o700)
        #expect(chmod(source + "/Resources", 0o3777) == 0)
        let installed = try Registry(stateDirectory: scratch.state).install(path: source).extensions[0]

        #expect(fileStat(installed.bundlePath + "/run")!.st_mode & 0o7777 == 0o711)
        #expect(fileStat(installed.bundlePath + "/tool")!.st_mode & 0o7777 == 0o700)
        #expect(fileStat(installed.bundlePath + "/Resources/private.txt")!.st_mode & 0o7777 == 0o600)
        #expect(fileStat(installed.bundlePath + "/Resources")!.st_mode & 0o7777 == 0o755)
    }

    @Test("concurrent installs from two registries and several threads all land, consistently")
    func concurrentInstalls() async throws {
        let scratch = try Scratch()
        let sources = try (0..<6).map { try scratch.makeAppex("src/E\($0).appex", identifier: "com.example.e\($0)") }
        let first = try Registry(stateDirectory: scratch.state)
        let second = try Registry(stateDirectory: scratch.state)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, source) in sources.enumerated() {
                let registry = i.isMultiple(of: 2) ? first : second
                group.addTask { try registry.install(path: source) }
                group.addTask { try registry.install(path: source) }
            }
            try await group.waitForAll()
        }
        #expect(try first.list().map(\.bundleIdentifier) == (0..<6).map { "com.example.e\($0)" })
        #expect(try first.integrityProblems() == [])
        for id in (0..<6).map({ "com.example.e\($0)" }) {
            let generation = try first.extension(bundleIdentifier: id).generation
            #expect(generation == 2)
            #expect(scratch.names(in: first.bundlesDirectory + "/" + id) == ["2"])
        }
        #expect(scratch.names(in: first.bundlesDirectory + "/.staging").isEmpty)
    }
}
