#if canImport(Glibc)
import Glibc
#endif

/// Finds the shipped `Policies/` directory.
///
/// Order: `$APPEX_POLICIES`; `<prefix>/share/appex/Policies` of the prefix the executable is
/// installed under (`installPrefix`); in a debug build only, the source checkout it was built from. A release build
/// never looks there: whoever owns that checkout would otherwise set the policy of root's
/// runs. Root then refuses any directory someone else could change (`PolicyDirectoryTrust`).
public enum PolicyLocator {
    /// The shipped directory, or nil when there is none.
    ///
    /// `executablePath` nil: the running executable as the kernel knows it (`/proc/self/exe`).
    /// `argv[0]` is only a name when the command was found on `PATH`, and then the installed
    /// layout was looked for relative to the working directory.
    public static func shippedDirectory(executablePath: String? = nil) -> String? {
        shippedDirectory(executablePath: executablePath, environment: ProcessEnvironment.value("APPEX_POLICIES"))
    }

    /// `environment`: `$APPEX_POLICIES`'s value; the tests pass nil to look past the one
    /// `make test` exports.
    package static func shippedDirectory(executablePath: String?, environment: String?) -> String? {
        if let env = environment, !env.isEmpty { return env }
        if let exe = resolved(executablePath ?? "/proc/self/exe"),
            let installed = resolved(installPrefix(of: exe) + "/share/appex/Policies"), hasDefaults(installed)
        {
            return installed
        }
        #if DEBUG
        if let source = resolved(directoryOf(#filePath) + "/../../Policies"), hasDefaults(source) { return source }
        #endif
        return nil
    }

    /// The prefix an executable is installed under: `<prefix>/bin/appex`, `<prefix>/sbin/appexd`,
    /// `<prefix>/libexec/appex/appex-commands` (the full tool, one level deeper).
    package static func installPrefix(of executable: String) -> String {
        let directory = directoryOf(executable)
        if directory.hasSuffix("/libexec/appex") { return directoryOf(directoryOf(directory)) }
        return directoryOf(directory)
    }

    /// `realpath(3)` of `path`; nil when it does not resolve.
    package static func resolved(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    /// `path` without its last component: "/" for a top-level entry, "." for a bare name.
    package static func directoryOf(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    package static func hasDefaults(_ dir: String) -> Bool { access(dir + "/defaults.yaml", F_OK) == 0 }

    /// The shipped policies with `overlays` layered on top, when the cache holds them as the
    /// files are now (`PolicyCache.cached`); nil sends the caller to `load`, which compiles.
    public static func cached(overlays: [String] = [], only extensionPoint: String? = nil) -> PolicySet? {
        guard let shipped = shippedDirectory() else { return nil }
        return PolicyCache.cached(directories: [shipped] + overlays, only: extensionPoint)
    }
}
