import Foundation

/// The executables SwiftPM built for this test run: beside the test bundle (its `.xctest`
/// executable, symlinks resolved), or one directory up when the bundle is a directory; else,
/// for a run from the package root, the default debug products directory.
public enum BuiltProducts {
    /// The directory the test bundle sits in.
    public static let directory: String = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        .deletingLastPathComponent().path

    /// The built executable `name`; where it would be when it is not built.
    public static func path(_ name: String) -> String {
        let here = URL(fileURLWithPath: directory)
        for candidate in [here, here.deletingLastPathComponent()] {
            let executable = candidate.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: executable) { return executable }
        }
        return Corpus.packageRoot + "/.build/debug/" + name
    }
}
