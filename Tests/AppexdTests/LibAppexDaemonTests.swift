import AppexTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// libappex against the real appexd: an extension built on it (Sources/appex-example-lib,
/// HelloLib.appex) served through it, and a C host on it (Sources/appex-host-c) getting its
/// answers.
@Suite(.serialized) struct LibAppexDaemonTests {
    static let identifier = "dev.appex.tests.daemon.hello-lib"

    /// A bare bundle around hello-lib (no activation rule: every request activates it),
    /// installed and enabled through the CLI.
    static func installHelloLib(_ d: DaemonTests.Daemon) throws -> String {
        let bundle = d.root + "/src/HelloLib.appex"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        chmod(d.root + "/src", 0o755)
        chmod(bundle, 0o755)
        try FileManager.default.copyItem(atPath: DaemonTests.bin + "/appex-example-lib", toPath: bundle + "/hello-lib")
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>
            <key>CFBundleIdentifier</key><string>\(identifier)</string>
            <key>CFBundleExecutable</key><string>hello-lib</string>
            <key>CFBundlePackageType</key><string>XPC!</string>
            <key>CFBundleVersion</key><string>1</string>
            <key>NSExtension</key><dict><key>NSExtensionPointIdentifier</key><string>com.apple.widgetkit-extension</string></dict>
            </dict></plist>
            """
        try Data(plist.utf8).write(to: URL(fileURLWithPath: bundle + "/Info.plist"))
        let installed = try d.appex(["install", bundle])
        #expect(installed.status == 0, "\(installed.err)")
        #expect(try d.appex(["enable", identifier]).status == 0)
        return identifier
    }

    /// A world-readable file under the daemon's root, for --file.
    static func inputFile(_ d: DaemonTests.Daemon, _ name: String, _ text: String) throws -> String {
        try inputFile(d, name, bytes: Array(text.utf8))
    }

    static func inputFile(_ d: DaemonTests.Daemon, _ name: String, bytes: [UInt8]) throws -> String {
        let path = d.root + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func withDaemon(_ body: (DaemonTests.Daemon) async throws -> Void) async throws {
        try #require(geteuid() == 0, "appexd needs root; CI runs as root")
        let d = try DaemonTests.Daemon(tag: "libappex-tests")
        defer { d.cleanUp() }
        try d.start()
        try await body(d)
    }

    @Test func extensionOnLibAppexAnswersThroughAppexd() async throws {
        try await withDaemon { d in
            let id = try Self.installHelloLib(d)
            let text = try d.appex(["request", id, "--text", "héllo", "--json"])
            #expect(text.status == 0, "\(text.err)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(text.out.utf8)) as? [String: Any])
            #expect(json["outcome"] as? String == "completed")
            #expect(((json["items"] as? [[String: Any]])?.first?["contentText"]) as? String == "hello from libappex: olléh")

            // A descriptor: the extension reads the file appexd passed on.
            let file = try d.appex(["request", id, "--file", try Self.inputFile(d, "in.txt", "xyz"), "--json"])
            #expect(file.status == 0, "\(file.err)")
            #expect(file.out.contains("hello from libappex: zyx"), "\(file.out)")

            // Input that is not UTF-8: the extension's own CancelRequest reaches the host.
            let binary = try d.appex(["request", id, "--file", try Self.inputFile(d, "bad.bin", bytes: [0x61, 0xFF]), "--json"])
            #expect(binary.out.contains("cancelled") && binary.out.contains("dev.appex.examples.hello-lib"), "\(binary.out)")
        }
    }

    @Test func cHostOnLibAppexGetsTheAnswer() async throws {
        try await withDaemon { d in
            let id = try Self.installHelloLib(d)
            let host = DaemonTests.bin + "/appex-host-c"
            let r = try CProgram.run(host, ["--socket", d.socket, id, "--text", "abc", "--text", "d",
                                            "--url", "https://example.com/", "--file", try Self.inputFile(d, "f.txt", "file")])
            #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
            // Two texts joined by a newline, reversed.
            #expect(r.stdout.contains("contentText: hello from libappex: d\ncba"), "\(r.stdout)")
            #expect(r.stdout.contains("outcome: completed"), "\(r.stdout)")

            let unknown = try CProgram.run(host, ["--socket", d.socket, "dev.appex.tests.nobody", "--text", "x"])
            #expect(unknown.status == 1 && unknown.stdout.contains("refused: unknown-extension"), "\(unknown.stdout) \(unknown.stderr)")

            let nowhere = try CProgram.run(host, ["--socket", d.root + "/no.sock", id, "--text", "x"])
            #expect(nowhere.status == 3 && nowhere.stderr.contains("connect to"), "\(nowhere.stderr)")
        }
    }
}
