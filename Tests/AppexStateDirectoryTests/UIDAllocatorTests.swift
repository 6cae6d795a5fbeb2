import AppexTestSupport
import Foundation
import Testing

@testable import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

/// The uid table is read once and then only what others append to it: what another process
/// (a second supervisor, `appex run`) allocated is seen, never handed out again, and a file
/// replaced under the same path is read anew.
struct UIDAllocatorTests {
    static func append(_ text: String, to file: String) throws {
        let h = try #require(FileHandle(forWritingAtPath: file))
        h.seekToEndOfFile()
        h.write(Data(text.utf8))
        try h.close()
    }

    @Test func seesWhatOthersAppendAndNeverReusesIt() throws {
        let scratch = try ScratchDirectory("uid-cache")
        let state = scratch.path
        let alloc = UIDAllocator(stateRoot: state, range: 300_000...300_009)
        #expect(try alloc.uid(for: "com.example.a") == 300_000)
        #expect(try alloc.uid(for: "com.example.b") == 300_001)

        // Another process appends two entries, the second half-written for now.
        try Self.append("com.example.other 300002\ncom.example.half 3000", to: alloc.file)
        #expect(try alloc.uid(for: "com.example.other") == 300_002)
        #expect(try alloc.uid(for: "com.example.c") == 300_003, "300002 is taken by the other process")
        // A half line (a writer that crashed) is closed before ours, and parses as nothing.
        let table = try alloc.assignments()
        #expect(table["com.example.c"] == 300_003)
        #expect(table["com.example.half"] == nil)
        #expect(try String(contentsOfFile: alloc.file, encoding: .utf8).hasSuffix("com.example.half 3000#\ncom.example.c 300003\n"))

        // Replaced: a new file at the same path is read from its start.
        unlink(alloc.file)
        try "com.example.a 300007\n".write(toFile: alloc.file, atomically: false, encoding: .utf8)
        #expect(try alloc.uid(for: "com.example.a") == 300_007)
        #expect(try alloc.uid(for: "com.example.b") == 300_000, "the old table is gone with its file")
    }

    @Test func parseTakesKeyUIDLinesAndSkipsTheRest() {
        let text = "a 1\nb 22\n\nnot-a-line\nc x\nd 4 5\n e 6\nf 4294967295\ng 4294967296\nh 7"
        #expect(UIDAllocator.parse(Array(text.utf8)) == ["a": 1, "b": 22, "f": 4_294_967_295, "h": 7])
    }
}
