import Foundation

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
    static let magic = Array("APXPOLC4".utf8)

    /// The policies of `directories`: from the cache when it holds them, else parsed (and
    /// cached). Throws what `PolicySet.load` throws.
    /// `only`: just what resolving that extension point needs (`PolicySet.narrowed(to:)`);
    /// from the cache, the rest is not decoded. Every file is still checked, and a parse
    /// still validates and caches the whole set.
    public static func load(directories: [String], only extensionPoint: String? = nil) throws -> PolicySet {
        try load(directories: directories, only: extensionPoint, cacheDirectory: directory())
    }

    /// The same with the cache in `cacheDirectory` (nil: no cache), used only when private.
    /// `now`: the wall clock the fingerprint's racy window is measured from (tests).
    static func load(directories: [String], only extensionPoint: String? = nil, cacheDirectory: String?,
                     now: Int64? = nil) throws -> PolicySet {
        func narrowed(_ set: PolicySet) -> PolicySet { extensionPoint.map { set.narrowed(to: $0) } ?? set }
        guard let dir = cacheDirectory, PrivateCacheFile.isPrivate(dir, directory: true),
              let fingerprint = PolicyFingerprint.of(directories: directories, now: now) else {
            return narrowed(try PolicySet.load(directories: directories))
        }
        let file = dir + "/policies-" + PrivateCacheFile.hex(PolicyFingerprint.nameHash(directories)) + ".cache"
        if let set = readCache(file, expecting: fingerprint, only: extensionPoint) { return set }
        let set = try PolicySet.load(directories: directories)
        writeCache(set, fingerprint: fingerprint, to: file)
        PrivateCacheFile.prune(dir, prefix: "policies-", suffix: ".cache", keeping: file, limit: 16)
        return narrowed(set)
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
            let parent = (dir as NSString).deletingLastPathComponent
            if mkdir(parent, 0o700) != 0 && errno != EEXIST { return nil }
            _ = mkdir(dir, 0o700)
        }
        return dir
    }

    static func readCache(_ file: String, expecting fingerprint: PolicyFingerprint, only extensionPoint: String? = nil) -> PolicySet? {
        guard let payload = PrivateCacheFile.read(file, magic: magic, key: fingerprint.value) else { return nil }
        var reader = CacheReader(payload, from: 0)
        return PolicySet.cacheDecoded(&reader, only: extensionPoint)
    }

    static func writeCache(_ set: PolicySet, fingerprint: PolicyFingerprint, to file: String) {
        PrivateCacheFile.write(file, magic: magic, key: fingerprint.value, payload: set.cacheEncoded())
    }
}

extension PolicyFingerprint {
    /// Names the cache file after the directory list, so overlays get caches of their own.
    static func nameHash(_ directories: [String]) -> UInt64 {
        // newlineJoined, not `joined`: its generic first use cost ~80 µs of every `appex run`.
        FNV1a.of(directories.newlineJoined.utf8)
    }
}
