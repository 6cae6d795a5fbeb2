import AppexTestSupport
import Foundation
import Testing

/// Docs/appexd.service, as `make install` writes it (ExecStart at an appexd that exists),
/// passes `systemd-analyze verify`, and keeps the directives appexd's deployment relies on.
@Suite struct ServiceUnitTests {
    static let unit = Corpus.packageRoot + "/Docs/appexd.service"

    static var analyze: String? {
        ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func theUnitVerifies() throws {
        guard let analyze = Self.analyze else {
            // As root `make test` installs systemd first (scripts/ensure-deps.sh): missing there is a failure.
            try #require(!RequiresRoot.isRoot, "systemd-analyze is missing; scripts/ensure-deps.sh installs the systemd package")
            print("ServiceUnitTests: skipped, systemd-analyze is missing (apt-get install systemd)")
            return
        }
        let scratch = try ScratchDirectory("unit")
        defer { scratch.remove() }
        let dir = scratch.path
        let text = try String(contentsOfFile: Self.unit, encoding: .utf8)
            .replacingOccurrences(of: "ExecStart=/usr/local/sbin/appexd", with: "ExecStart=" + BuiltProducts.path("appexd"))
        try text.write(toFile: dir + "/appexd.service", atomically: true, encoding: .utf8)
        let out = try CProgram.run(analyze, ["verify", dir + "/appexd.service"])
        #expect(out.status == 0, "systemd-analyze verify: \(out.stderr)")
        #expect(!out.stderr.contains("appexd.service"), "warnings about the unit: \(out.stderr)")
    }

    @Test func theUnitSaysWhatAppexdNeeds() throws {
        let lines = Set(try String(contentsOfFile: Self.unit, encoding: .utf8).split(separator: "\n").map(String.init))
        for directive in [
            "Type=notify", "Delegate=yes", "KillMode=mixed", "StateDirectory=appex", "RuntimeDirectory=appex",
            "ExecStart=/usr/local/sbin/appexd", "ExecReload=/bin/sh -c 'kill -HUP $$MAINPID'",
        ] {
            #expect(lines.contains(directive), "\(directive) missing")
        }
        #expect(lines.contains { $0.hasPrefix("WatchdogSec=") })
    }
}
