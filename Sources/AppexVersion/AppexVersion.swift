/// Appex's version, printed by every executable's `--version` and exported by appexd as
/// `appex_build_info{version="…"} 1`.
///
/// A constant, not read at build time: SwiftPM reads no file into a build without a plugin.
/// `VERSION` at the repository root is the source of truth; `VersionFileTests` fails when
/// this constant and that file differ.
public enum AppexVersion {
    public static let current = "0.9.0"
}
