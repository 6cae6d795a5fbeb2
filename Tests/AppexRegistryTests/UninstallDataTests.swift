import AppexStateDirectory
import AppexTestSupport
import Foundation
import Testing

@testable import AppexRegistry

#if canImport(Glibc)
import Glibc
#endif

/// `uninstall(removeData: true)` on containers an extension filled with what it liked (issue
/// 30, finding 7), and what the registry holds when removing the data fails.
@Suite("Registry uninstall with hostile data")
struct UninstallDataTests {
    /// `com.example.share` installed from `source`, and its (empty) data container.
    func installed() throws -> (scratch: Scratch, source: String, registry: Registry, container: String) {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        let registry = try Registry(stateDirectory: scratch.state)
        try registry.install(path: source)
        let container = ContainerStore(stateRoot: scratch.state).containerPath(for: "com.example.share")
        try FileManager.default.createDirectory(atPath: container, withIntermediateDirectories: true)
        return (scratch, source, registry, container)
    }

    @Test("a container holding a deep tree, odd names and links out is removed whole")
    func hostileTree() throws {
        let (scratch, source, registry, container) = try installed()
        try HostileTree.plant(in: container, depth: 300, linkTargets: [source, scratch.path])

        #expect(try registry.uninstall("com.example.share", removeData: true) == ["com.example.share"])
        #expect(scratch.names(in: scratch.state + "/containers").isEmpty)
        #expect(FileManager.default.fileExists(atPath: source + "/Info.plist"), "the removal followed a link")
        #expect(try registry.list().isEmpty)
    }

    /// A removal that fails after the rows went (here: a mount inside the container, which is
    /// not crossed) leaves the extension uninstalled and its data out of use, says so, and the
    /// next open of the registry finishes the removal.
    @Test(
        "a failed data removal leaves the extension uninstalled and is finished at the next open",
        .requiresRoot("mounting needs root"))
    func failedRemovalIsConsistent() throws {
        let (scratch, _, registry, container) = try installed()
        let mountPoint = container + "/Documents/mnt"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        #expect(mount("tmpfs", mountPoint, "tmpfs", 0, "size=1m") == 0)
        var mounted = true
        defer {
            // Wherever the mount is now: under the identifier, or under the detached name.
            if mounted {
                umount2(mountPoint, Int32(MNT_DETACH))
                for name in scratch.names(in: scratch.state + "/containers") {
                    umount2(scratch.state + "/containers/" + name + "/Documents/mnt", Int32(MNT_DETACH))
                }
            }
        }

        do {
            try registry.uninstall("com.example.share", removeData: true)
            Issue.record("the removal crossed a mount point")
        } catch RegistryError.dataLeftBehind(let id, let path, let message) {
            #expect(id == "com.example.share")
            #expect(path.hasPrefix(scratch.state + "/containers/.removed.com.example.share."))
            #expect(message.contains("EXDEV"), "\(message)")
        }
        #expect(try registry.list().isEmpty)
        #expect(bundlesAreEmpty(registry))
        #expect(!FileManager.default.fileExists(atPath: container), "the data is still in use under its identifier")

        // The detached container, unmounted now, goes when the registry next opens.
        let detached = scratch.names(in: scratch.state + "/containers")
        #expect(detached.count == 1)
        umount2(scratch.state + "/containers/" + (detached.first ?? "") + "/Documents/mnt", Int32(MNT_DETACH))
        mounted = false
        let reopened = try Registry(stateDirectory: scratch.state)
        #expect(reopened.recovery.removedData.count == 1)
        #expect(scratch.names(in: scratch.state + "/containers").isEmpty)
    }
}
