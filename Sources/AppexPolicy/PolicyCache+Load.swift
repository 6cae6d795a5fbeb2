/// Compiling the policies when the cache does not hold them (YAML: AppexPolicy, not AppexPolicyCore).
extension PolicyCache {
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
    static func load(
        directories: [String], only extensionPoint: String? = nil, cacheDirectory: String?,
        now: Int64? = nil
    ) throws -> PolicySet {
        func narrowed(_ set: PolicySet) -> PolicySet { extensionPoint.map { set.narrowed(to: $0) } ?? set }
        let found = cached(directories: directories, only: extensionPoint, cacheDirectory: cacheDirectory, now: now)
        if let set = found.set { return set }
        let set = try PolicySet.load(directories: directories)
        if let file = found.file, let fingerprint = found.fingerprint, let dir = cacheDirectory {
            writeCache(set, fingerprint: fingerprint, to: file)
            PrivateCacheFile.prune(dir, prefix: "policies-", suffix: ".cache", keeping: file, limit: 16)
        }
        return narrowed(set)
    }

}
