/// Bounds on what one install may copy. Sources are hostile: a bundle that would fill the
/// state directory's disk, or a tree built to exhaust memory or time, is refused, not copied.
/// An install of a containing app counts all its plug-ins together.
public enum InstallLimits {
    /// Bytes of regular-file content (1 GiB; real extensions are a few MiB).
    public static let maximumTotalBytes: Int64 = 1 << 30
    /// Directory entries of any kind met while copying.
    public static let maximumEntries = 20_000
    /// Directory nesting below a bundle's top (`Name.appex/a/b/...`).
    public static let maximumDepth = 32
}
