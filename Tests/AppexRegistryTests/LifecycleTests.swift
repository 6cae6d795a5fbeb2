import AppexStateDirectory
import Foundation
import Testing

@testable import AppexRegistry

#if canImport(Glibc)
import Glibc
#endif

@Suite("Registry enable, disable, re-install, uninstall")
struct LifecycleTests {
    @Test("enabled and disabled states persist across reopening")
    func enablePersists() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        try Registry(stateDirectory: scratch.state).install(path: source)

        #expect(try Registry(stateDirectory: scratch.state).enable("com.example.share").isEnabled)
        #expect(try Registry(stateDirectory: scratch.state).extension(bundleIdentifier: "com.example.share").isEnabled)
        #expect(try Registry(stateDirectory: scratch.state).disable("com.example.share").isEnabled == false)
        let reopened = try Registry(stateDirectory: scratch.state)
        #expect(try reopened.extension(bundleIdentifier: "com.example.share").isEnabled == false)
        #expect(reopened.recovery.isEmpty)
    }

    @Test("unknown identifiers are typed errors naming the identifier")
    func unknownIdentifiers() throws {
        let scratch = try Scratch()
        let registry = try Registry(stateDirectory: scratch.state)
        let calls: [(String, () throws -> Void)] = [
            ("lookup", { _ = try registry.extension(bundleIdentifier: "com.example.nope") }),
            ("enable", { try registry.enable("com.example.nope") }),
            ("disable", { try registry.disable("com.example.nope") }),
            ("uninstall", { try registry.uninstall("com.example.nope", removeData: true) }),
        ]
        for (name, call) in calls {
            do {
                try call()
                Issue.record("\(name) of an unknown identifier succeeded")
            } catch RegistryError.unknownExtension(let id) {
                #expect(id == "com.example.nope", "\(name)")
                #expect(RegistryError.unknownExtension(id).description.contains("\"com.example.nope\""))
            }
        }
    }

    @Test("re-install replaces the copy with a new generation and keeps the enabled state")
    func reinstall() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        let registry = try Registry(stateDirectory: scratch.state)
        let first = try registry.install(path: source).extensions[0]
        try registry.enable("com.example.share")

        try scratch.write("src/Share.appex/Resources/data.txt", "version two")
        let second = try registry.install(path: source).extensions[0]
        #expect(second.generation == 2)
        #expect(second.isEnabled)
        #expect(second.bundlePath == scratch.state + "/bundles/com.example.share/2/Share.appex")
        #expect(second.contentDigest != first.contentDigest)
        #expect(try scratch.read(second.bundlePath + "/Resources/data.txt") == "version two")
        #expect(scratch.names(in: scratch.state + "/bundles/com.example.share") == ["2"])
        #expect(try registry.list().count == 1)
        #expect(try registry.integrityProblems() == [])
    }

    @Test("re-installing an app uninstalls the plug-ins its new version lacks, keeping their data")
    func appUpdateDropsPlugIn() throws {
        let scratch = try Scratch()
        let v1 = try scratch.makeApp(
            "v1/Host.app", identifier: "com.example.host",
            plugIns: ["com.example.host.share", "com.example.host.action"])
        let v2 = try scratch.makeApp("v2/Host.app", identifier: "com.example.host", plugIns: ["com.example.host.share"])
        let registry = try Registry(stateDirectory: scratch.state)
        try registry.install(path: v1)
        try registry.enable("com.example.host.share")
        try scratch.write("state/containers/com.example.host.action/Documents/note", "kept")

        let result = try registry.install(path: v2)
        #expect(result.removedExtensions == ["com.example.host.action"])
        #expect(result.extensions.map(\.bundleIdentifier) == ["com.example.host.share"])
        #expect(result.extensions[0].isEnabled)
        #expect(try registry.list().map(\.bundleIdentifier) == ["com.example.host.share"])
        #expect(!FileManager.default.fileExists(atPath: scratch.state + "/bundles/com.example.host.action"))
        #expect(FileManager.default.fileExists(atPath: scratch.state + "/containers/com.example.host.action/Documents/note"))
        #expect(try registry.integrityProblems() == [])
    }

    @Test("an identifier installed from one app is not replaced from another source")
    func ownership() throws {
        let scratch = try Scratch()
        let app = try scratch.makeApp("src/Host.app", identifier: "com.example.host", plugIns: ["com.example.host.share"])
        let bare = try scratch.makeAppex("src/share.appex", identifier: "com.example.host.share", data: "impostor")
        let registry = try Registry(stateDirectory: scratch.state)
        let installed = try registry.install(path: app).extensions[0]

        do {
            try registry.install(path: bare)
            Issue.record("a bare bundle replaced an app's extension")
        } catch RegistryError.ownedByAnotherApp(let id, let from, let requested) {
            #expect(id == "com.example.host.share" && from == "com.example.host" && requested == nil)
        }
        #expect(try registry.extension(bundleIdentifier: "com.example.host.share") == installed)
        #expect(try scratch.read(installed.bundlePath + "/Resources/data.txt") == "payload")
        #expect(scratch.names(in: registry.bundlesDirectory + "/com.example.host.share") == ["1"])
        #expect(scratch.names(in: registry.bundlesDirectory + "/.staging").isEmpty)
    }

    @Test("uninstall keeps the data container unless asked, and removes copy and row")
    func uninstall() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        let registry = try Registry(stateDirectory: scratch.state)
        let containers = ContainerStore(stateRoot: scratch.state)
        let container = containers.containerPath(for: "com.example.share")

        try registry.install(path: source)
        try scratch.write("state/containers/com.example.share/Documents/note", "mine")
        #expect(try registry.uninstall("com.example.share", removeData: false) == ["com.example.share"])
        #expect(try registry.list().isEmpty)
        #expect(bundlesAreEmpty(registry))
        #expect(try scratch.read(container + "/Documents/note") == "mine")

        try registry.install(path: source)
        #expect(try registry.extension(bundleIdentifier: "com.example.share").isEnabled == false)
        #expect(try registry.uninstall("com.example.share", removeData: true) == ["com.example.share"])
        #expect(!FileManager.default.fileExists(atPath: container))
        #expect(try registry.list().isEmpty)
        #expect(bundlesAreEmpty(registry))
        #expect(try Registry(stateDirectory: scratch.state).list().isEmpty)
    }

    @Test("uninstalling an app identifier removes all its extensions and the app")
    func uninstallApp() throws {
        let scratch = try Scratch()
        let source = try scratch.makeApp(
            "src/Host.app", identifier: "com.example.host",
            plugIns: ["com.example.host.share", "com.example.host.action"])
        let registry = try Registry(stateDirectory: scratch.state)
        try registry.install(path: source)
        try registry.install(path: try scratch.makeAppex("src/Other.appex", identifier: "com.example.other"))

        #expect(try registry.uninstall("com.example.host", removeData: false) == ["com.example.host.action", "com.example.host.share"])
        #expect(try registry.apps().isEmpty)
        #expect(try registry.list().map(\.bundleIdentifier) == ["com.example.other"])

        // The last extension of an app takes the app's row with it.
        try registry.install(path: source)
        try registry.uninstall("com.example.host.share", removeData: false)
        #expect(try registry.apps().map(\.extensionIdentifiers) == [["com.example.host.action"]])
        try registry.uninstall("com.example.host.action", removeData: false)
        #expect(try registry.apps().isEmpty)
        #expect(try registry.integrityProblems() == [])
    }
}
