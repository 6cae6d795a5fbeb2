import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The kits beyond Swift against the real appexd: an extension built on libappex
/// (Sources/appex-example-lib, HelloLib.appex) served through it, a C host on libappex
/// (Sources/appex-host-c) and the Python host (kits/python) getting its answers.
@Suite(.serialized) struct LibAppexDaemonTests {
    static let identifier = "dev.appex.tests.daemon.hello-lib"

    /// A bare bundle around hello-lib (no activation rule: every request activates it),
    /// installed and enabled through the CLI.
    static func installHelloLib(_ d: DaemonTests.Daemon) throws -> String {
        try install(d, product: "appex-example-lib", executable: "hello-lib", identifier: identifier)
    }

    /// A bare bundle around `product`, named `executable`, installed and enabled.
    static func install(_ d: DaemonTests.Daemon, product: String, executable: String, identifier: String) throws -> String {
        let bundle = d.root + "/src/\(executable).appex"
        try BareBundle.write(at: bundle, executable: executable, from: BuiltProducts.path(product), identifier: identifier)
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
        try RequiresRoot.check("appexd needs root")
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

    /// A request that keeps the application's only thread 7 s, past the default 5 s
    /// unresponsiveTimeout: with APPEX_PINGS_ON_THREAD the library's thread answers appexd's
    /// pings and the request completes; without it the extension is killed `unresponsive`.
    @Test func pingsOnTheLibrarysThreadKeepALongRequestAlive() async throws {
        try await withDaemon { d in
            let threaded = try Self.install(
                d, product: "appex-lib-test-extension", executable: "lib-test-threaded",
                identifier: "dev.appex.tests.daemon.lib-threaded")
            let looped = try Self.install(
                d, product: "appex-lib-test-extension", executable: "lib-test",
                identifier: "dev.appex.tests.daemon.lib-looped")
            let alive = try d.appex(["request", threaded, "--text", "7", "--json"])
            #expect(alive.status == 0 && alive.out.contains("answered, pings on a thread"), "\(alive.out) \(alive.err)")
            let killed = try d.appex(["request", looped, "--text", "7", "--json"])
            #expect(killed.status == 1 && killed.out.contains("unresponsive"), "\(killed.out) \(killed.err)")
        }
    }

    @Test func cHostOnLibAppexGetsTheAnswer() async throws {
        try await withDaemon { d in
            let id = try Self.installHelloLib(d)
            let host = BuiltProducts.path("appex-host-c")
            let r = try CProgram.run(
                host,
                [
                    "--socket", d.socket, id, "--text", "abc", "--text", "d",
                    "--url", "https://example.com/", "--file", try Self.inputFile(d, "f.txt", "file"),
                ])
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

    /// kits/python, found from this file's place in the checkout.
    static let pythonKit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("kits/python").path

    /// `python3 -m …` with the kit on the path (python3 from PATH: every machine has one).
    static func python(_ arguments: [String]) throws -> CProgram.Output {
        try CProgram.run("/usr/bin/env", ["PYTHONPATH=\(pythonKit)", "PYTHONDONTWRITEBYTECODE=1", "python3"] + arguments)
    }

    @Test func pythonHostGetsTheAnswer() async throws {
        try await withDaemon { d in
            let id = try Self.installHelloLib(d)
            let r = try Self.python([
                "-m", "appex", id, "--socket", d.socket, "--text", "pyth", "--url", "https://example.com/",
                "--file", try Self.inputFile(d, "p.txt", "x"), "--json",
            ])
            #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout)")
            #expect(json["outcome"] as? String == "completed")
            #expect(((json["items"] as? [[String: Any]])?.first?["contentText"]) as? String == "hello from libappex: htyp")
            #expect((json["phases"] as? [String: Any])?["roundTrip"] != nil)

            let unknown = try Self.python(["-m", "appex", "dev.appex.tests.nobody", "--socket", d.socket, "--text", "x"])
            #expect(unknown.status == 1 && unknown.stdout.contains("outcome: refused (unknown-extension)"), "\(unknown.stdout) \(unknown.stderr)")
        }
    }

    /// The Python kit's own unit tests (codec, and the client against a test-played appexd).
    @Test func pythonKitUnitTests() throws {
        let r = try CProgram.run(
            "/usr/bin/env",
            [
                "PYTHONDONTWRITEBYTECODE=1", "python3", "-m", "unittest", "discover",
                "-s", Self.pythonKit + "/tests", "-t", Self.pythonKit,
            ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("OK"), "\(r.stderr)")
    }
}
