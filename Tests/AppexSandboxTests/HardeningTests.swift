import AppexCgroups
import AppexTestSupport
import Foundation
import Testing

@testable import AppexSandbox
@testable import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

/// In-process checks of the hardening pieces the CLI tests attack end to end.
struct HardeningTests {
    @Test func logRotatesAtItsLimitAndKeepsOneOldFile() throws {
        let state = try ScratchDirectory.make("sbx-log", mode: 0o755)
        defer { try? ContainerStore.removeTree(state) }
        let store = ContainerStore(stateRoot: state)
        let log = try store.openLog(for: "com.example.log", limit: 4096)
        let write = try log.makePipe()
        let line = Array(repeating: UInt8(ascii: "x"), count: 999) + [10]
        for _ in 0..<12 { try Sys.writeAll(fd: write, line) }
        Sys.close(write)
        log.stop()
        let current = try Sys.readBytes(store.logPath(for: "com.example.log"))
        let old = try Sys.readBytes(store.logPath(for: "com.example.log") + ".1")
        #expect(current.count <= 4096 && old.count <= 4096)
        #expect(!current.isEmpty && !old.isEmpty)
        // Nothing older than one rotation is kept: at most twice the limit on disk.
        #expect(!FileManager.default.fileExists(atPath: store.logPath(for: "com.example.log") + ".2"))
        #expect((current.count + old.count) % 1000 == 0, "a line was split or lost at the rotation")
    }

    @Test func uidRangeOverlapsAreFound() throws {
        let etc = try ScratchDirectory.make("sbx-etc", mode: 0o755)
        defer { try? ContainerStore.removeTree(etc) }
        try "root:x:0:0::/root:/bin/sh\nsvc:x:200005:200005::/:/bin/false\n".write(toFile: etc + "/passwd", atomically: false, encoding: .utf8)
        try "root:x:0:\n".write(toFile: etc + "/group", atomically: false, encoding: .utf8)
        try "alice:100000:65536\n# a comment\nbob:265000:65536\n".write(toFile: etc + "/subuid", atomically: false, encoding: .utf8)
        let found = UIDRangeCheck.conflicts(200_000...265_535, etc: etc)
        #expect(found.map(\.file) == [etc + "/passwd", etc + "/subuid"])
        #expect(found[0].what.contains("svc") && found[0].what.contains("200005"))
        #expect(found[1].what.contains("bob") && found[1].what.contains("265000-330535"))
        #expect(UIDRangeCheck.conflicts(400_000...465_535, etc: etc).isEmpty)
        #expect(throws: SandboxError.self) { try UIDRangeCheck.verify(200_000...265_535, etc: etc) }
        #expect(UIDRangeCheck.parse("300000-365535") == 300_000...365_535)
        #expect(UIDRangeCheck.parse("10-20") == nil && UIDRangeCheck.parse("5000-4000") == nil && UIDRangeCheck.parse("x") == nil)
    }

    /// The byte reader of the account files splits lines and fields as splitting Strings
    /// would, and reads numbers as `UInt32(String)` does.
    @Test func accountFilesAreReadAsStringsWouldBe() {
        let text =
            "root:x:0:0::/root:/bin/sh\n\n   \n  # comment:1:2\n  svc:x:+200005:\n::\nname\nwin:x:7\r\nbig:x:4294967296\nmax:x:4294967295\nneg:x:-1\nlast:1:2"
        let bytes = Array(text.utf8)
        let reference: [[String]] = bytes.split(separator: UInt8(ascii: "\n")).compactMap { line in
            let t = line.drop { $0 == UInt8(ascii: " ") }
            if t.isEmpty || t.first == UInt8(ascii: "#") { return nil }
            return t.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        }
        var read: [[UIDRangeCheck.Field]] = []
        UIDRangeCheck.forEachEntry(bytes) { read.append($0) }
        #expect(read.map { $0.map { UIDRangeCheck.text(bytes, $0) } } == reference)
        for (fields, strings) in zip(read, reference) {
            for (f, s) in zip(fields, strings) {
                #expect(UIDRangeCheck.number(bytes, f) == UInt32(s), "\(s)")
            }
        }
        var none = 0
        UIDRangeCheck.forEachEntry([]) { _ in none += 1 }
        #expect(none == 0)
    }

    @Test func removeTreeDoesNotFollowLinksOutOfTheTree() throws {
        let dir = try ScratchDirectory.make("sbx-rm", mode: 0o755)
        defer { try? ContainerStore.removeTree(dir) }
        let outside = dir + "/outside"
        try FileManager.default.createDirectory(atPath: outside + "/keep", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir + "/tree/a/b", withIntermediateDirectories: true)
        #expect(symlink(outside, dir + "/tree/a/link") == 0)
        #expect(symlink(outside + "/keep", dir + "/tree/a/b/link2") == 0)
        try ContainerStore.removeTree(dir + "/tree")
        #expect(!FileManager.default.fileExists(atPath: dir + "/tree"))
        #expect(FileManager.default.fileExists(atPath: outside + "/keep"), "the removal followed a link")
    }
}

/// The executable that runs is the one that was checked.
@Suite(.serialized, .requiresRoot("the sandbox needs root"))
struct CheckedExecutableTests {
    @Test func anExecutableSwappedAfterTheCheckIsRefused() throws {
        let r = try ProbeRun("swap")
        let store = ContainerStore(stateRoot: r.state)
        let container = try store.prepare(bundleIdentifier: r.id)
        let sandbox = try ExtensionSandbox.create(spec: r.spec([]), container: container, store: store)
        defer { sandbox.close() }
        #expect(try ExtensionRun.run(r.spec(["pid"]), options: r.options(), sandbox: sandbox).exitStatus == 0)
        // Replace the executable on the host after the sandbox checked it.
        try FileManager.default.copyItem(atPath: Fixture.probe, toPath: r.exe + ".new")
        #expect(rename(r.exe + ".new", r.exe) == 0)
        #expect {
            try ExtensionRun.run(r.spec(["pid"]), options: r.options(), sandbox: sandbox)
        } throws: { error in
            "\(error)".contains("changed after it was checked")
        }
        Fixture.removeParentCgroups()
    }
}
