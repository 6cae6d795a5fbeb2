import AppexPolicy
import AppexTestSupport
import Foundation
import Testing

@testable import AppexBinaryLint

/// Where a search path or needed name leads: only `$ORIGIN` reaches the bundle, and never
/// out of it.
@Suite struct LibraryResolverTests {
    @Test(arguments: [
        ("$ORIGIN", ["bin"], LibraryResolver.Place.inside(["bin"])),
        ("$ORIGIN/../lib", ["bin"], .inside(["lib"])),
        ("${ORIGIN}/lib/./x", [], .inside(["lib", "x"])),
        ("$ORIGIN/..", [], .outside("\"$ORIGIN/..\" climbs out of the bundle")),
        ("$ORIGIN/../../lib", ["bin"], .outside("\"$ORIGIN/../../lib\" climbs out of the bundle")),
        ("/usr/lib", [], .outside("\"/usr/lib\" is outside the bundle")),
        ("lib", [], .outside("\"lib\" is relative to the working directory, not the bundle")),
        ("", [], .outside("\"\" is relative to the working directory, not the bundle")),
        ("$LIB/x", [], .outside("\"$LIB/x\" uses a substitution other than $ORIGIN")),
        ("$ORIGINAL", [], .outside("\"$ORIGINAL\" is not $ORIGIN followed by a path")),
    ])
    func placesEntries(entry: String, origin: [String], place: LibraryResolver.Place) {
        #expect(LibraryResolver.place(entry, origin: origin) == place)
    }

    @Test func hostileNamesArePrintedEscaped() {
        #expect(Printable.escape(Array("lib\u{1b}[2Jx.so".utf8)) == "lib\\x1b[2Jx.so")
        #expect(Printable.escape([0x6c, 0xff, 0x0a]) == "l\\xff\\x0a")
        #expect(Printable.escape(Array("libé.so".utf8)) == "libé.so")
    }

    /// A library in the bundle that is a symbolic link (even to a file inside the bundle) is
    /// not followed, and says so.
    @Test func aLinkedLibraryIsNotFollowed() throws {
        let scratch = try ScratchDirectory("lint-link")
        defer { scratch.remove() }
        let dir = scratch.path
        try FileManager.default.createDirectory(atPath: dir + "/lib", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestBinaries.library, toPath: dir + "/lib/real.so")
        try FileManager.default.createSymbolicLink(atPath: dir + "/lib/libhelper.so", withDestinationPath: "real.so")
        try CProgram.compile(
            "int helper(int); int main(void) { return helper(1); }", named: "app", in: dir,
            flags: ["-L\(dir)/lib", "-lhelper", "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/lib"])
        let policy = BinaryLintPolicy(EffectivePolicy(extensionPoint: "", in: try PolicyLocator.load()), extensionPoint: nil)
        let report = BinaryLinter.lint(bundle: dir, executable: "app", policy: policy)
        #expect(report.errors.isEmpty)
        #expect(report.objects == ["app"])
        let unchecked = try #require(report.findings.first { $0.code == .libraryUnchecked })
        #expect(unchecked.object == "lib/libhelper.so")
        #expect(unchecked.message.contains("symbolic link"), "\(unchecked.message)")
        #expect(!report.findings.contains { $0.symbol == "reboot" })
    }

    /// A directory on the way that is a link is refused the same way.
    @Test func aLinkedDirectoryIsNotFollowed() throws {
        let scratch = try ScratchDirectory("lint-linkdir")
        defer { scratch.remove() }
        let dir = scratch.path
        try FileManager.default.createDirectory(atPath: dir + "/real", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestBinaries.library, toPath: dir + "/real/libhelper.so")
        try FileManager.default.createSymbolicLink(atPath: dir + "/lib", withDestinationPath: "real")
        try CProgram.compile(
            "int helper(int); int main(void) { return helper(1); }", named: "app", in: dir,
            flags: ["-L\(dir)/real", "-lhelper", "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/lib"])
        let policy = BinaryLintPolicy(EffectivePolicy(extensionPoint: "", in: try PolicyLocator.load()), extensionPoint: nil)
        let report = BinaryLinter.lint(bundle: dir, executable: "app", policy: policy)
        #expect(report.objects == ["app"])
        #expect(report.findings.contains { $0.code == .libraryUnchecked && $0.message.contains("lib is a symbolic link") })
    }
}
