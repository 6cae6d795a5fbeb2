import Foundation

/// The real-world conformance corpus (real Info.plists and entitlements from public
/// repositories). It is not part of the repository: it lives in `../shared/corpus` beside the
/// package root, or wherever `APPEX_CORPUS` points. Tests that need it are skipped when it is
/// missing, unless `APPEX_REQUIRE_CORPUS=1` (set by `.ci/run`) makes a missing corpus a failure.
public enum Corpus {
    /// The package root, found from this file so tests run from any directory.
    public static let packageRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // AppexTestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent().path

    /// `APPEX_CORPUS` when set and non-empty (relative to the current directory), else
    /// `../shared/corpus` beside the package root.
    public static let root: String = {
        if let override = ProcessInfo.processInfo.environment["APPEX_CORPUS"], !override.isEmpty {
            return URL(fileURLWithPath: override).standardizedFileURL.path
        }
        return URL(fileURLWithPath: packageRoot).appendingPathComponent("../shared/corpus").standardizedFileURL.path
    }()

    public static let directory = ManifestDirectory(root: root, tableName: "SOURCES.tsv")

    public static func path(_ relative: String) -> String { directory.path(relative) }

    /// The corpus directory exists. Whether it holds what the tests expect is for them to say.
    public static var isPresent: Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// `APPEX_REQUIRE_CORPUS=1`: a run where a missing corpus is a failure, not a skip.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["APPEX_REQUIRE_CORPUS"] == "1" }

    /// Why corpus tests are skipped, in the words the test run prints.
    public static var skipReason: String {
        "no conformance corpus at \(root) (set APPEX_CORPUS=DIR to run it); the fixture tests in Tests/Fixtures cover the same code"
    }

    /// Thrown instead of skipping when the corpus is required and missing.
    public struct MissingError: Error, CustomStringConvertible {
        public var description: String {
            "APPEX_REQUIRE_CORPUS=1 but the conformance corpus is missing: no directory at \(Corpus.root). "
                + "Put the corpus there, point APPEX_CORPUS at it, or unset APPEX_REQUIRE_CORPUS."
        }
    }

    /// The condition of every corpus test: true when the corpus is there, false (skip) when it
    /// is not, and a thrown `MissingError` (the test fails) when it is required and not there.
    public static func isAvailable() throws -> Bool {
        if isPresent { return true }
        if isRequired { throw MissingError() }
        return false
    }
}
