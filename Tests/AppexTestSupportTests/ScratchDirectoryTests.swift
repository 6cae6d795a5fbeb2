import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The one scratch directory of the tests: what a test leaves in it goes with it, whatever
/// its modes, owners and depth, and nothing outside it does.
@Suite struct ScratchDirectoryTests {
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    @Test func itIsPrivateOrOfTheModeAsked() throws {
        for (mode, expected) in [(nil, mode_t(0o700)), (mode_t(0o755), mode_t(0o755))] {
            let scratch = try mode.map { try ScratchDirectory("mode", mode: $0) } ?? ScratchDirectory("mode")
            defer { scratch.remove() }
            var info = stat()
            #expect(lstat(scratch.path, &info) == 0)
            #expect(info.st_mode & 0o7777 == expected)
            #expect(scratch.path.hasPrefix(NSTemporaryDirectory() + "appex-mode-"))
        }
    }

    /// Read-only directories (one not even searchable), names that are not UTF-8, a tree past
    /// PATH_MAX, and links out of it: all of it goes, what the links point at stays.
    @Test func aTreeOfReadOnlyDeepAndOddEntriesGoesAndNothingOutside() throws {
        let outside = try ScratchDirectory("outside")
        defer { outside.remove() }
        try Data("precious".utf8).write(to: URL(fileURLWithPath: outside.sub("file")))
        let scratch = try ScratchDirectory("tree")
        try FileManager.default.createDirectory(atPath: scratch.sub("deep"), withIntermediateDirectories: false)
        try HostileTree.plant(in: scratch.sub("deep"), depth: 600, linkTargets: [outside.path, outside.sub("file")])
        try FileManager.default.createDirectory(atPath: scratch.sub("ro/inner"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: scratch.sub("ro/inner/file")))
        #expect(chmod(scratch.sub("ro/inner"), 0o000) == 0)
        #expect(chmod(scratch.sub("ro"), 0o500) == 0)

        try ScratchDirectory.removeTree(scratch.path)
        #expect(!Self.exists(scratch.path))
        #expect((try? String(contentsOfFile: outside.sub("file"), encoding: .utf8)) == "precious", "the removal followed a link")
        // Gone already: nothing to do, no error.
        scratch.remove()
        try ScratchDirectory.removeTree(scratch.path)
    }

    /// Files and directories of another uid (what an extension leaves in its container) go
    /// too; taking them needs root.
    @Test(.requiresRoot("changing a file's owner needs root"))
    func anotherUidsTreeGoes() throws {
        let scratch = try ScratchDirectory("owners")
        try FileManager.default.createDirectory(atPath: scratch.sub("theirs/sub"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: scratch.sub("theirs/sub/file")))
        for path in ["theirs", "theirs/sub", "theirs/sub/file"] { #expect(chown(scratch.sub(path), 4242, 4242) == 0) }
        #expect(chmod(scratch.sub("theirs/sub"), 0o500) == 0)
        try ScratchDirectory.removeTree(scratch.path)
        #expect(!Self.exists(scratch.path))
    }

    /// Letting go of it is enough.
    @Test func itGoesWithItsOwner() throws {
        var path = ""
        do {
            let scratch = try ScratchDirectory("owner")
            path = scratch.path
            try Data("x".utf8).write(to: URL(fileURLWithPath: scratch.sub("file")))
        }
        #expect(!Self.exists(path))
    }
}
