import AppexTestSupport
import Foundation
import Testing

@testable import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

/// `TreeRemoval` on what an extension can make in its container (issue 30, finding 7): a
/// recursive, path-based removal stopped at depth 256 (ELOOP) and left the rest.
@Suite struct TreeRemovalTests {
    /// Descriptors of this process open on anything under `path` (other tests run beside
    /// this one, so the count of all of them says nothing).
    static func descriptors(under path: String) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
            .filter { $0.hasPrefix(path) }
    }

    /// Deeper than the old limit, far deeper than the descriptors the removal may hold, with
    /// non-UTF-8 names and links out of the tree at every level: all of it goes, nothing it
    /// links to does, and no descriptor is left open.
    @Test(arguments: [300, 2000])
    func aDeepTreeWithOddNamesAndLinksOutIsRemovedWhole(depth: Int) throws {
        let dir = try ScratchDirectory("rm-deep")
        // Foundation's removal (the scratch directory's) cannot take such a tree if this fails.
        defer { try? ContainerStore.removeTree(dir.path + "/tree") }
        let outside = dir.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside + "/keep", withIntermediateDirectories: true)
        try Data("precious".utf8).write(to: URL(fileURLWithPath: outside + "/keep/file"))
        try FileManager.default.createDirectory(atPath: dir.path + "/tree", withIntermediateDirectories: false)
        let made = try HostileTree.plant(in: dir.path + "/tree", depth: depth, linkTargets: [outside, outside + "/keep/file", "/"])
        #expect(made > depth * 5)

        try ContainerStore.removeTree(dir.path + "/tree")
        #expect(Self.descriptors(under: dir.path).isEmpty, "a descriptor was left open")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/tree"))
        #expect((try? String(contentsOfFile: outside + "/keep/file", encoding: .utf8)) == "precious", "the removal followed a link")
        // Gone already: nothing to do, no error.
        try ContainerStore.removeTree(dir.path + "/tree")
    }

    /// A wide directory (more subdirectories than one scan collects) beside deep ones.
    @Test func aWideTreeIsRemovedWhole() throws {
        let dir = try ScratchDirectory("rm-wide")
        let tree = dir.path + "/tree"
        for k in 0..<(TreeRemoval.namesPerScan * 2 + 7) {
            try FileManager.default.createDirectory(atPath: tree + "/w\(k)/x", withIntermediateDirectories: true)
        }
        let parent = open(dir.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(parent) }
        try TreeRemoval.remove(Array("tree".utf8), in: parent, display: tree)
        #expect(!FileManager.default.fileExists(atPath: tree))
    }

    /// A file system mounted inside the tree is not entered: the removal stops with EXDEV and
    /// what the mount holds is untouched.
    @Test(.requiresRoot("mounting needs root"))
    func aMountPointInsideIsNotCrossed() throws {
        let dir = try ScratchDirectory("rm-mount")
        let mountPoint = dir.path + "/tree/a/mnt"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        #expect(mount("tmpfs", mountPoint, "tmpfs", 0, "size=1m") == 0)
        defer { umount2(mountPoint, Int32(MNT_DETACH)) }
        try Data("kept".utf8).write(to: URL(fileURLWithPath: mountPoint + "/file"))
        #expect(throws: SandboxError.self) { try ContainerStore.removeTree(dir.path + "/tree") }
        do {
            try ContainerStore.removeTree(dir.path + "/tree")
        } catch let error as SandboxError {
            #expect(error.errno == .improperLink && error.path == dir.path + "/tree/a/mnt", "\(error)")
        }
        #expect((try? String(contentsOfFile: mountPoint + "/file", encoding: .utf8)) == "kept")
        umount2(mountPoint, Int32(MNT_DETACH))
        try ContainerStore.removeTree(dir.path + "/tree")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/tree"))
    }

    /// Detaching renames the container out of use at once; it can be put back, and what a
    /// failed removal left is found and removed later.
    @Test func aDetachedContainerIsRenamedBackOrRemovedLater() throws {
        let state = try ScratchDirectory("detach")
        let store = ContainerStore(stateRoot: state.path)
        let path = store.containerPath(for: "com.example.detach")
        try FileManager.default.createDirectory(atPath: path + "/Documents", withIntermediateDirectories: true)
        try HostileTree.plant(in: path + "/Documents", depth: 40, linkTargets: [state.path])

        let detached = try #require(try store.detachContainer(for: "com.example.detach"))
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(detached.name.hasPrefix(".removed.com.example.detach."))
        try store.reattach(detached)
        #expect(FileManager.default.fileExists(atPath: path + "/Documents/f"))

        let again = try #require(try store.detachContainer(for: "com.example.detach"))
        #expect(try store.detachContainer(for: "com.example.detach") == nil)
        #expect(try store.removeDetachedContainers() == [again.path])
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.path + "/containers").isEmpty)
        #expect(FileManager.default.fileExists(atPath: state.path), "the removal followed a link")
    }
}
