#if canImport(Glibc)
import Glibc
#endif

/// The compiled policy set, kept between runs so that `appex run` does not parse ~35 YAML
/// files each time.
///
/// A cache file holds a magic number, the `PolicyFingerprint` of the sources it was compiled
/// from (and of the executable that compiled it), and the resolved `PolicySet`
/// (PolicyCacheCodec). It is used only when the fingerprint of the files as they are now
/// matches, so an edit is never served stale, and a new build of Appex never reads an old
/// build's cache; a policy with errors is never cached (the error is reported every time, as
/// without a cache).
///
/// Who may have written the file matters more than what it says: a cache is compiled policy,
/// and a root process must not take its sandbox rules from a file another user could have
/// replaced. `PrivateCacheFile` reads only private files in a private directory; anything
/// else, or a file that does not decode, is ignored and rewritten.
///
/// Where: `$APPEX_POLICY_CACHE` when it is a path; `off` (or `0`) disables caching. Otherwise
/// `/var/cache/appex` for root, `$XDG_CACHE_HOME/appex` or `~/.cache/appex` for others.
public enum PolicyCache {
    package static let magic = Array("APXPOLC5".utf8)

    /// The policies of `directories` when the cache holds them as the files are now; nil
    /// when it does not (no cache, a file changed, another build wrote it), and the caller
    /// compiles them (`PolicyCache.load`, in AppexPolicy). What `appex run` reads.
    /// `only`: just what resolving that extension point needs (`PolicySet.narrowed(to:)`).
    public static func cached(directories: [String], only extensionPoint: String? = nil) -> PolicySet? {
        cached(directories: directories, only: extensionPoint, cacheDirectory: directory()).set
    }

    /// The cache file for `directories` in a private `cacheDirectory` and the fingerprint of
    /// the files now (nil when there is no usable cache), and the set when it holds it.
    package static func cached(
        directories: [String], only extensionPoint: String?, cacheDirectory: String?,
        now: Int64? = nil
    ) -> (set: PolicySet?, file: String?, fingerprint: PolicyFingerprint?) {
        // A directory root may not trust is never served from the cache: the load refuses it.
        guard let dir = cacheDirectory, PrivateCacheFile.isPrivate(dir, directory: true),
            directories.allSatisfy({ PolicyDirectoryTrust.problem($0) == nil }),
            let fingerprint = PolicyFingerprint.of(directories: directories, now: now)
        else {
            return (nil, nil, nil)
        }
        let file = dir + "/policies-" + PrivateCacheFile.hex(PolicyFingerprint.nameHash(directories)) + ".cache"
        return (readCache(file, expecting: fingerprint, only: extensionPoint), file, fingerprint)
    }

    /// The cache directory, created (0700) when missing; nil when caching is off or there is
    /// no home for it. Callers still check that it is private before using it. The compiled
    /// seccomp programs live here too (SeccompProgramCache).
    package static func directory(environment: [String: String]? = nil) -> String? {
        // getenv, not ProcessInfo's dictionary, when no environment is given (ProcessEnvironment).
        let variable = { (name: String) in environment.map { $0[name] } ?? ProcessEnvironment.value(name) }
        let configured = variable("APPEX_POLICY_CACHE") ?? ""
        if configured == "off" || configured == "0" { return nil }
        let dir: String
        if !configured.isEmpty {
            dir = configured
        } else if geteuid() == 0 {
            dir = "/var/cache/appex"
        } else if let xdg = variable("XDG_CACHE_HOME"), xdg.hasPrefix("/") {
            dir = xdg + "/appex"
        } else if let home = variable("HOME"), home.hasPrefix("/") {
            dir = home + "/.cache/appex"
        } else {
            return nil
        }
        if mkdir(dir, 0o700) != 0 && errno == ENOENT {
            // The parent (e.g. ~/.cache) is missing: make it as the user's own, then ours.
            let parent = PolicyLocator.directoryOf(dir)
            if mkdir(parent, 0o700) != 0 && errno != EEXIST { return nil }
            _ = mkdir(dir, 0o700)
        }
        return dir
    }

    package static func readCache(_ file: String, expecting fingerprint: PolicyFingerprint, only extensionPoint: String? = nil) -> PolicySet? {
        guard let payload = PrivateCacheFile.read(file, magic: magic, key: fingerprint.value) else { return nil }
        var reader = CacheReader(payload, from: 0)
        return PolicySet.cacheDecoded(&reader, only: extensionPoint)
    }

    package static func writeCache(_ set: PolicySet, fingerprint: PolicyFingerprint, to file: String) {
        PrivateCacheFile.write(file, magic: magic, key: fingerprint.value, payload: set.cacheEncoded())
    }
}

extension PolicyFingerprint {
    /// Names the cache file after the directory list, so overlays get caches of their own.
    package static func nameHash(_ directories: [String]) -> UInt64 {
        // newlineJoined, not `joined`: its generic first use is a conformance scan in every `appex run`.
        FNV1a.of(directories.newlineJoined.utf8)
    }
}
