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

    @Test func theConstantIsTheVersionFile() throws {
        #expect(AppexVersion.current == (try Self.fileVersion), "update Sources/AppexVersion/AppexVersion.swift to VERSION")
    }

    /// Every executable `make install` installs (scripts/install.sh), the sandbox init too.
    @Test(arguments: ["appex", "appex-commands", "appexd", "appex-sandbox-init"])
    func everyExecutablePrintsIt(_ name: String) throws {
        let out = try CProgram.run(BuiltProducts.path(name), ["--version"])
        #expect(out.status == 0, "\(name) --version: \(out.stderr)")
        #expect(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == (try Self.fileVersion))
    }
}
