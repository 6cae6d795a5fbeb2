import Foundation

/// The repository's own fixtures in `Tests/Fixtures`: small manifests written for these tests,
/// covering what the real-world corpus covers, so the tests pass from a clone alone.
public enum Fixtures {
    public static let directory = ManifestDirectory(
        root: (Corpus.packageRoot as NSString).appendingPathComponent("Tests/Fixtures"), tableName: "MANIFEST.tsv")

    public static func path(_ relative: String) -> String { directory.path(relative) }
}
