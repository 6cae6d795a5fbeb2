import AppexTestSupport
import Foundation
import Testing

/// `appex lint-binary` and the check inside `appex validate`, through the real binary, on
/// programs compiled here.
@Suite struct LintBinaryCLITests {
    static let directory: String = try! ScratchDirectory.makeForProcess("lint-cli")

    /// Imports mount; never run (the call sits behind an impossible argument count).
    static let mountProbe: String = try! CProgram.compile(
        """
        #include <sys/mount.h>
        int main(int argc, char **argv) { if (argc > 99) return mount(argv[1], argv[2], "none", 0, 0); return 0; }
        """, named: "mount-probe", in: directory)

    static let clean: String = try! CProgram.compile(
        """
        #include <stdio.h>
        int main(void) { puts("hello"); return 0; }
        """, named: "clean", in: directory)

    func lint(_ args: [String]) throws -> (AppexBinary.Result, [[String: Any]]) {
        let r = try AppexBinary.run(["lint-binary", "--json"] + args)
        let targets = try #require(try r.json() as? [[String: Any]], "\(r.stdout)\(r.stderr)")
        return (r, targets)
    }

    func findings(_ target: [String: Any]) -> [[String: Any]] { target["findings"] as? [[String: Any]] ?? [] }

    @Test func aProbeImportingMountIsFlaggedWithItsGroup() throws {
        let (r, targets) = try lint([Self.mountProbe])
        #expect(r.status == 0, "warnings are not failures: \(r.stderr)")
        let mount = try #require(findings(targets[0]).first { $0["symbol"] as? String == "mount" })
        #expect(mount["syscall"] as? String == "mount")
        #expect(mount["group"] as? String == "mounting")
        #expect(mount["code"] as? String == "binary.unavailable-api")
        #expect(mount["severity"] as? String == "warning")
        #expect(mount["action"] as? String == "errno")

        let text = try AppexBinary.run(["lint-binary", Self.mountProbe])
        #expect(text.status == 0)
        #expect(text.stdout.contains("\(Self.mountProbe): warning: mount-probe imports mount"), "\(text.stdout)")
        #expect(text.stdout.contains("syscall group mounting") && text.stdout.contains("[binary.unavailable-api]"))
    }

    @Test func aCleanBinaryHasNoFindings() throws {
        let (r, targets) = try lint([Self.clean])
        #expect(r.status == 0)
        #expect(findings(targets[0]).isEmpty, "\(targets)")
        #expect((targets[0]["errors"] as? [Any])?.isEmpty == true)
        let libraries = targets[0]["libraries"] as? [[String: Any]] ?? []
        #expect(libraries.contains { $0["name"] as? String == "libc.so.6" && $0["checked"] as? Bool == false })
    }

    @Test func anExtensionPointChoosesThePolicy() throws {
        let (_, targets) = try lint(["--extension-point", "com.apple.share-services", Self.mountProbe])
        #expect(targets[0]["policy"] as? String == "Share")
        #expect(targets[0]["extensionPoint"] as? String == "com.apple.share-services")
        #expect(findings(targets[0]).contains { $0["group"] as? String == "mounting" })
    }

    /// Bundle layout: the executable needs `Frameworks/libhelper.so` ($ORIGIN RUNPATH), which
    /// imports ptrace, and `liboutside.so`, found only through an absolute RUNPATH outside the
    /// bundle, which imports reboot. The first is followed, the second is not.
    @Test func aBundledLibraryIsFollowedAndOneOutsideIsNot() throws {
        let scratch = try ScratchDirectory("lint-bundle")
        defer { scratch.remove() }
        let dir = scratch.path
        let bundle = dir + "/Lib.appex", outside = dir + "/outside"
        try makeBundle(bundle, point: "com.apple.widget-extension")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try CProgram.compile(
            "#include <sys/ptrace.h>\nlong helper(void) { return ptrace(PTRACE_TRACEME, 0, 0, 0); }",
            named: "libhelper.so", in: bundle + "/Frameworks", flags: ["-shared", "-fPIC"])
        try CProgram.compile(
            "#include <sys/reboot.h>\nint outside(void) { return reboot(0); }",
            named: "liboutside.so", in: outside, flags: ["-shared", "-fPIC"])
        try CProgram.compile(
            "long helper(void); int outside(void);\nint main(int c, char **v) { if (c > 99) return helper() + outside(); return 0; }",
            named: "Widget", in: bundle,
            flags: [
                "-L\(bundle)/Frameworks", "-lhelper", "-L\(outside)", "-loutside", "-Wl,--enable-new-dtags",
                "-Wl,-rpath,$ORIGIN/Frameworks:\(outside):$ORIGIN/../outside",
            ])
        try FileManager.default.removeItem(atPath: bundle + "/Frameworks/libhelper.so.c")

        let (r, targets) = try lint([bundle])
        #expect(r.status == 0, "\(r.stdout)")
        let t = targets[0]
        #expect(t["kind"] as? String == "bundle")
        #expect(t["objects"] as? [String] == ["Widget", "Frameworks/libhelper.so"])
        let ptrace = try #require(findings(t).first { $0["symbol"] as? String == "ptrace" })
        #expect(ptrace["object"] as? String == "Frameworks/libhelper.so")
        #expect(ptrace["group"] as? String == "process-tracing")
        #expect(!findings(t).contains { $0["symbol"] as? String == "reboot" }, "a library outside the bundle was followed")
        let libraries = t["libraries"] as? [[String: Any]] ?? []
        let out = try #require(libraries.first { $0["name"] as? String == "liboutside.so" })
        #expect(out["checked"] as? Bool == false)
        let note = out["note"] as? String ?? ""
        #expect(note.contains("\"\(outside)\" is outside the bundle") && note.contains("climbs out of the bundle"), "\(note)")
    }

    /// `appex validate` reports the same check as warnings: the bundle stays valid.
    @Test func validateWarnsAboutUnavailableCalls() throws {
        let scratch = try ScratchDirectory("lint-validate")
        defer { scratch.remove() }
        let dir = scratch.path
        let bundle = dir + "/Probe.appex"
        try makeBundle(bundle, point: "com.apple.widget-extension")
        try FileManager.default.copyItem(atPath: Self.mountProbe, toPath: bundle + "/Widget")
        let r = try AppexBinary.run(["validate", "--json", bundle])
        let results = try #require(try r.json() as? [[String: Any]], "\(r.stdout)")
        #expect(results[0]["valid"] as? Bool == true, "\(r.stdout)")
        #expect(r.status == 0)
        let found = (results[0]["findings"] as? [[String: Any]] ?? []).filter { $0["code"] as? String == "binary.unavailable-api" }
        #expect(found.count == 1)
        #expect(found.first?["severity"] as? String == "warning")
        #expect(found.first?["keyPath"] as? String == "CFBundleExecutable")
        #expect((found.first?["message"] as? String)?.contains("syscall group mounting") == true)
    }

    @Test func malformedInputExitsTwoWithWhereItIsWrong() throws {
        let scratch = try ScratchDirectory("lint-bad")
        defer { scratch.remove() }
        let dir = scratch.path
        var bytes = Array(FileManager.default.contents(atPath: Self.clean)!)
        bytes[54] = 40  // e_phentsize
        FileManager.default.createFile(atPath: dir + "/bad-phentsize", contents: Data(bytes))
        FileManager.default.createFile(atPath: dir + "/truncated", contents: Data(bytes.prefix(30)))
        FileManager.default.createFile(atPath: dir + "/script", contents: Data("#!/bin/sh\n".utf8))

        let bad = try AppexBinary.run(["lint-binary", dir + "/bad-phentsize"])
        #expect(bad.status == 65, "malformed: EX_DATAERR")
        #expect(bad.stdout.contains("error: bad-phentsize: malformed ELF: ELF header at offset 0x36: e_phentsize is 40"), "\(bad.stdout)")

        let (r, targets) = try lint([dir + "/truncated", dir + "/script", Self.mountProbe, dir + "/missing"])
        #expect(r.status == 66, "a missing file among them: EX_NOINPUT")
        let kinds = targets.map { (($0["errors"] as? [[String: Any]])?.first?["kind"] as? String) ?? "-" }
        #expect(kinds == ["malformed", "not-elf", "-", "unreadable"])
        // The good file among them is still checked.
        #expect(findings(targets[2]).contains { $0["symbol"] as? String == "mount" })
    }

    @Test func aLinkIsNotFollowedToTheExecutable() throws {
        let scratch = try ScratchDirectory("lint-exe-link")
        defer { scratch.remove() }
        let dir = scratch.path
        let bundle = dir + "/Link.appex"
        try makeBundle(bundle, point: "com.apple.widget-extension")
        try FileManager.default.createSymbolicLink(atPath: bundle + "/Widget", withDestinationPath: Self.mountProbe)
        let (r, targets) = try lint([bundle])
        #expect(r.status == 65)
        let error = try #require((targets[0]["errors"] as? [[String: Any]])?.first)
        #expect((error["message"] as? String)?.contains("symbolic link") == true, "\(error)")
    }

    func makeBundle(_ path: String, point: String) throws {
        try FileManager.default.createDirectory(atPath: path + "/Frameworks", withIntermediateDirectories: true)
        try BareBundle.writeInfoPlist(.init(identifier: "com.example.lint.widget", executable: "Widget", point: point), in: path)
    }
}
