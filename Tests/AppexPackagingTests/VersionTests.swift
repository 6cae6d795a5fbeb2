import AppexTestSupport
import AppexVersion
import Foundation
import Testing

/// `VERSION` at the repository root is the version; the compiled-in constant and every
/// executable's `--version` must say the same.
@Suite struct VersionTests {
    static var fileVersion: String {
        get throws {
            try String(contentsOfFile: Corpus.packageRoot + "/VERSION", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// The products directory: the test bundle's, or its parent (a bundle directory).
    static func executable(_ name: String) -> String {
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [products, products.deletingLastPathComponent()] {
            let exe = candidate.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: exe) { return exe }
        }
        return Corpus.packageRoot + "/.build/debug/" + name
    }

    @Test func theConstantIsTheVersionFile() throws {
        #expect(AppexVersion.current == (try Self.fileVersion), "update Sources/AppexVersion/AppexVersion.swift to VERSION")
    }

    /// Every executable `make install` installs (scripts/install.sh), the sandbox init too.
    @Test(arguments: ["appex", "appex-commands", "appexd", "appex-sandbox-init"])
    func everyExecutablePrintsIt(_ name: String) throws {
        let out = try CProgram.run(Self.executable(name), ["--version"])
        #expect(out.status == 0, "\(name) --version: \(out.stderr)")
        #expect(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == (try Self.fileVersion))
    }
}
