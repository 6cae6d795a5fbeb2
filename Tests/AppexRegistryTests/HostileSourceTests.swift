import AppexBundle
import AppexTestSupport
import Foundation
import Testing

@testable import AppexRegistry

#if canImport(Glibc)
import Glibc
#endif

/// Sources are written by extension authors: links, special files and oversized trees are
/// refused with a finding that names the file, and nothing is installed.
@Suite("Registry hostile sources")
struct HostileSourceTests {
    /// Installs `source`, expects a refusal holding a finding `code` at `file`, and checks
    /// that nothing reached the registry.
    func expectRefused(
        _ source: String, code: String, at file: String, messageContains: String,
        registry: Registry
    ) throws {
        let bundles = try #require(refusal { try registry.install(path: source) })
        let findings = bundles.flatMap(\.findings)
        let finding = try #require(findings.first { $0.code == code }, "findings: \(findings)")
        #expect(finding.severity == .error)
        #expect(finding.keyPath.description == file)
        #expect(finding.message.contains(messageContains), "\(finding.message)")
        #expect(try registry.list().isEmpty)
        #expect(bundlesAreEmpty(registry))
    }

    @Test("a small binary Info.plist that expands past the reader's budget is refused, naming the limit")
    func expandingInfoPlist() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        let plist = BinaryPlistBuilder.expandingInfoPlist(
            identifier: "com.example.share", executable: "run",
            extensionPoint: "com.apple.share-services",
            stringBytes: 16 << 10, fanOut: 64, levels: 2)
        try scratch.write("src/Share.appex/Info.plist", Data(plist))
        let registry = try Registry(stateDirectory: scratch.state)
        let bundles = try #require(refusal { try registry.install(path: source) })
        let finding = try #require(bundles.flatMap(\.findings).first { $0.code == "plist.malformed" })
        #expect(
            finding.message.contains("expands past the limit of \(PropertyListReader.maximumExpandedBytes) bytes"),
            "\(finding.message)")
        #expect(try registry.list().isEmpty)
        #expect(bundlesAreEmpty(registry))
    }

    @Test("a symlink to /etc/passwd inside the bundle is refused, naming its target")
    func symlinkToPasswd() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        #expect(symlink("/etc/passwd", source + "/Resources/passwd") == 0)
        try expectRefused(
            source, code: "install.symlink", at: "Resources/passwd", messageContains: "\"/etc/passwd\"",
            registry: Registry(stateDirectory: scratch.state))
    }

    @Test("a symlink pointing inside the bundle is refused too")
    func innerSymlink() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        #expect(symlink("Resources/data.txt", source + "/alias.txt") == 0)
        try expectRefused(
            source, code: "install.symlink", at: "alias.txt", messageContains: "symbolic link",
            registry: Registry(stateDirectory: scratch.state))
    }

    @Test("a symlinked Info.plist is refused before any plist is read")
    func symlinkedInfoPlist() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        try scratch.write("elsewhere/Info.plist", infoPlistXML(identifier: "com.example.share"))
        #expect(unlink(source + "/Info.plist") == 0)
        #expect(symlink(scratch.sub("elsewhere/Info.plist"), source + "/Info.plist") == 0)
        try expectRefused(
            source, code: "install.symlink", at: "Info.plist", messageContains: "elsewhere/Info.plist",
            registry: Registry(stateDirectory: scratch.state))
    }

    @Test("a FIFO as the executable is refused without hanging on it")
    func fifoExecutable() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        #expect(unlink(source + "/run") == 0)
        #expect(mkfifo(source + "/run", 0o755) == 0)
        try expectRefused(
            source, code: "install.special-file", at: "run", messageContains: "FIFO",
            registry: Registry(stateDirectory: scratch.state))
    }

    @Test("a socket and a device node are refused")
    func socketAndDevice() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        // /dev/null, 1:3, in the kernel encoding small numbers share (major << 8 | minor).
        #expect(mknod(source + "/null", S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)
        let registry = try Registry(stateDirectory: scratch.state)
        try expectRefused(source, code: "install.special-file", at: "null", messageContains: "character device", registry: registry)

        #expect(unlink(source + "/null") == 0)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let socketPath = source + "/sock"
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in socketPath.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        try expectRefused(source, code: "install.special-file", at: "sock", messageContains: "socket", registry: registry)
    }

    @Test("a hard-linked file is refused")
    func hardLink() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        try scratch.write("outside.txt", "not the author's to publish")
        #expect(link(scratch.sub("outside.txt"), source + "/Resources/linked.txt") == 0)
        try expectRefused(
            source, code: "install.hard-link", at: "Resources/linked.txt", messageContains: "2 hard links",
            registry: Registry(stateDirectory: scratch.state))
    }

    @Test("the bundle itself being a symlink, or missing, or a file, is an unusable source")
    func unusableSources() throws {
        let scratch = try Scratch()
        try scratch.makeAppex("src/Real.appex", identifier: "com.example.real")
        #expect(symlink(scratch.sub("src/Real.appex"), scratch.sub("src/Link.appex")) == 0)
        try scratch.write("src/File.appex", "x")
        let registry = try Registry(stateDirectory: scratch.state)
        for (path, problem) in [
            ("src/Link.appex", "symbolic link"), ("src/Missing.appex", "no such file"),
            ("src/File.appex", "not a directory"),
        ] {
            do {
                try registry.install(path: scratch.sub(path))
                Issue.record("\(path) was installed")
            } catch RegistryError.unusableSource(let reported, let message) {
                #expect(reported == scratch.sub(path))
                #expect(message.contains(problem), "\(message)")
            }
        }
        #expect(bundlesAreEmpty(registry))
    }

    @Test("a symlinked PlugIns directory in an app is refused")
    func symlinkedPlugIns() throws {
        let scratch = try Scratch()
        try scratch.makeApp("elsewhere/Host.app", identifier: "com.example.host", plugIns: ["com.example.host.share"])
        try scratch.write("src/Host.app/Info.plist", appInfoPlistXML(identifier: "com.example.host"))
        #expect(symlink(scratch.sub("elsewhere/Host.app/PlugIns"), scratch.sub("src/Host.app/PlugIns")) == 0)
        try expectRefused(
            scratch.sub("src/Host.app"), code: "install.symlink", at: "PlugIns", messageContains: "symbolic link",
            registry: Registry(stateDirectory: scratch.state))
    }

    @Test("every problem is reported at once, with paths inside the app")
    func allProblemsReported() throws {
        let scratch = try Scratch()
        let source = try scratch.makeApp(
            "src/Host.app", identifier: "com.example.host",
            plugIns: ["com.example.host.share", "com.example.host.action"])
        #expect(symlink("/etc/shadow", source + "/PlugIns/share.appex/shadow") == 0)
        #expect(mkfifo(source + "/PlugIns/action.appex/Resources/pipe", 0o644) == 0)
        let registry = try Registry(stateDirectory: scratch.state)
        let bundles = try #require(refusal { try registry.install(path: source) })
        #expect(bundles.map(\.path) == [source])
        #expect(
            bundles[0].findings.map(\.keyPath.description).sorted()
                == ["PlugIns/action.appex/Resources/pipe", "PlugIns/share.appex/shadow"])
        #expect(bundlesAreEmpty(registry))
    }

    @Test("a sparse file over the size limit is refused without reading it")
    func tooLarge() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        #expect(truncate(source + "/Resources/data.txt", off_t(InstallLimits.maximumTotalBytes) + 1) == 0)
        try expectRefused(
            source, code: "install.too-large", at: "Resources/data.txt",
            messageContains: "\(InstallLimits.maximumTotalBytes) bytes",
            registry: Registry(stateDirectory: scratch.state))
    }

    @Test("nesting deeper than the limit is refused")
    func tooDeep() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        let deep = (0...InstallLimits.maximumDepth).map { "d\($0)" }.joined(separator: "/")
        try FileManager.default.createDirectory(atPath: source + "/" + deep, withIntermediateDirectories: true)
        let bundles = try #require(refusal { try Registry(stateDirectory: scratch.state).install(path: source) })
        #expect(bundles.flatMap(\.findings).map(\.code) == ["install.too-deep"])
        #expect(
            bundles[0].findings[0].keyPath.description
                == (0...InstallLimits.maximumDepth).map { "d\($0)" }.joined(separator: "/"))
    }

    @Test("more entries than the limit are refused")
    func tooManyEntries() throws {
        let scratch = try Scratch()
        let source = try scratch.makeAppex("src/Share.appex", identifier: "com.example.share")
        for i in 0..<InstallLimits.maximumEntries {
            let fd = open(source + "/Resources/f\(i)", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
            #expect(fd >= 0)
            close(fd)
        }
        let registry = try Registry(stateDirectory: scratch.state)
        let bundles = try #require(refusal { try registry.install(path: source) })
        #expect(bundles.flatMap(\.findings).map(\.code) == ["install.too-many-entries"])
        #expect(bundlesAreEmpty(registry))
    }
}
