import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `appex conformance` against the three kits' extensions (the Swift SDK's Share example,
/// HelloC written from the page, HelloLib on libappex): every check passes; and against an
/// executable that never checks in, which fails the checks it is given.
@Suite struct ConformanceCLITests {
    /// A bundle in a fresh 0755 directory around a built product (readable by the uid the
    /// checks run it as).
    static func bundle(product: String, executable: String, identifier: String) throws -> String {
        let root = try ScratchDirectory.make("conformance", mode: 0o755)
        let bundle = root + "/\(executable).appex"
        let source = BuiltProducts.path(product)
        try BareBundle.write(at: bundle, executable: executable, from: source, identifier: identifier)
        return bundle
    }

    static func removeBundle(_ bundle: String) {
        try? ScratchDirectory.removeTree(URL(fileURLWithPath: bundle).deletingLastPathComponent().path)
    }

    @Test(arguments: [("AppexExampleShare", "share"), ("appex-example-c", "hello-c"), ("appex-example-lib", "hello-lib")])
    func kitPassesEveryCheck(product: String, executable: String) throws {
        let bundle = try Self.bundle(product: product, executable: executable, identifier: "dev.appex.tests.conformance.\(executable)")
        defer { Self.removeBundle(bundle) }
        let r = try AppexBinary.run(["conformance", bundle, "--json"])
        let json = try #require(try r.json() as? [String: Any], "\(r.stdout) \(r.stderr)")
        let failed = (json["checks"] as? [[String: Any]] ?? []).filter { $0["passed"] as? Bool != true }
        #expect(r.status == 0 && failed.isEmpty, "\(product): \(failed)")
        #expect((json["passed"] as? Int ?? 0) >= 13, "\(r.stdout)")
    }

    @Test func silentExecutableFailsCheckIn() throws {
        let bundle = try Self.bundle(product: "appex", executable: "not-an-extension", identifier: "dev.appex.tests.conformance.silent")
        defer { Self.removeBundle(bundle) }
        // The appex front itself: it never says Hello on fd 3.
        let r = try AppexBinary.run(["conformance", bundle, "--check", "check-in", "--check", "end-of-stream"])
        #expect(r.status == 1, "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("FAIL  check-in") && r.stdout.contains("0 of 2 checks passed"), "\(r.stdout)")
    }

    /// A sloppy extension (Python, on the kit's codec): it checks in, answers pings and
    /// requests, and ignores everything else, keeping the descriptors it gets.
    static let sloppy = """
        #!/usr/bin/env python3
        import os, socket, struct, sys
        sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0] + "/kit")
        from appex import wire
        s = socket.socket(fileno=3)
        s.send(wire.hello(os.environ["APPEX_BUNDLE_IDENTIFIER"], os.getpid()).encode())
        kept = []
        while True:
            data, ancillary, flags, _ = s.recvmsg(200000, 1024)
            kept += ancillary
            if not data:
                sys.exit(0)
            kind = struct.unpack_from("<H", data, 6)[0]
            if kind in (0x03, 0x10):
                value = struct.unpack_from("<Q", data, 22)[0]
                s.send(wire.Frame(0x04 if kind == 0x03 else 0x11).integer(1, "<Q", value).encode())
        """

    @Test func sloppyExtensionFailsTheChecksItBreaks() throws {
        let bundle = try Self.bundle(product: "appex", executable: "sloppy", identifier: "dev.appex.tests.conformance.sloppy")
        defer { Self.removeBundle(bundle) }
        try FileManager.default.removeItem(atPath: bundle + "/sloppy")
        try Data(Self.sloppy.utf8).write(to: URL(fileURLWithPath: bundle + "/sloppy"))
        chmod(bundle + "/sloppy", 0o755)
        try FileManager.default.copyItem(atPath: AppexBinary.packageRoot + "/kits/python", toPath: bundle + "/kit")
        let r = try AppexBinary.run([
            "conformance", bundle, "--json", "--check", "request", "--check", "descriptors",
            "--check", "malformed-magic", "--check", "terminate",
        ])
        #expect(r.status == 1, "\(r.stdout) \(r.stderr)")
        let json = try #require(try r.json() as? [String: Any], "\(r.stdout)")
        let verdicts = Dictionary(
            uniqueKeysWithValues: (json["checks"] as? [[String: Any]] ?? []).map {
                ($0["check"] as? String ?? "", $0["passed"] as? Bool ?? false)
            })
        #expect(verdicts == ["request": true, "descriptors": false, "malformed-magic": false, "terminate": false], "\(r.stdout)")
    }

    /// The host side: the C host on libappex, the Python host and `appex request` (the Swift
    /// HostClient) each pass every host check; a command that never connects fails check-in.
    @Test func hostsPassEveryHostCheck() throws {
        let products = BuiltProducts.directory
        let hosts: [[String]] = [
            [products + "/appex-host-c", "dev.appex.tests.conformance.any", "--text", "hi"],
            [
                "/usr/bin/env", "PYTHONPATH=\(AppexBinary.packageRoot)/kits/python", "PYTHONDONTWRITEBYTECODE=1",
                "python3", "-m", "appex", "dev.appex.tests.conformance.any", "--text", "hi",
            ],
            [AppexBinary.path, "request", "dev.appex.tests.conformance.any", "--text", "hi"],
        ]
        for host in hosts {
            let r = try AppexBinary.run(["conformance", "--json", "--host", "--"] + host)
            let json = try #require(try r.json() as? [String: Any], "\(r.stdout) \(r.stderr)")
            let failed = (json["checks"] as? [[String: Any]] ?? []).filter { $0["passed"] as? Bool != true }
            #expect(r.status == 0 && failed.isEmpty && json["passed"] as? Int == 7, "\(host[0]): \(failed)")
        }
        let silent = try AppexBinary.run(["conformance", "--host", "--check", "host-check-in", "--", "/bin/true"])
        #expect(silent.status == 1 && silent.stdout.contains("FAIL  host-check-in"), "\(silent.stdout)")
    }
}
