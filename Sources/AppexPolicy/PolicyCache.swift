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
/// replaced. So a cache is read only from a directory owned by the effective uid that no one
/// else may write, and only when the file itself is a regular file owned by that uid, opened
/// without following a link. Anything else, or a file that does not decode, is ignored and
/// rewritten.
///
/// Where: `$APPEX_POLICY_CACHE` when it is a path; `off` (or `0`) disables caching. Otherwise
/// `/var/cache/appex` for root, `$XDG_CACHE_HOME/appex` or `~/.cache/appex` for others.
public enum PolicyCache {
    static let magic = Array("APXPOLC2".utf8)

    /// The policies of `directories`: from the cache when it holds them, else parsed (and
    /// cached). Throws what `PolicySet.load` throws.
    public static func load(directories: [String]) throws -> PolicySet {
        try load(directories: directories, cacheDirectory: directory())
    }

    /// The same with the cache in `cacheDirectory` (nil: no cache), used only when private.
    static func load(directories: [String], cacheDirectory: String?) throws -> PolicySet {
        guard let dir = cacheDirectory, isPrivate(dir, directory: true),
              let fingerprint = PolicyFingerprint.of(directories: directories) else {
            return try PolicySet.load(directories: directories)
        }
        let file = dir + "/policies-" + hex(PolicyFingerprint.nameHash(directories)) + ".cache"
        if let set = readCache(file, expecting: fingerprint) { return set }
        let set = try PolicySet.load(directories: directories)
        writeCache(set, fingerprint: fingerprint, to: file)
        prune(dir, keeping: file)
        return set
    }

    /// The cache directory, created (0700) when missing; nil when caching is off or there is
    /// no home for it. `load` still checks that it is private before using it.
    static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let configured = environment["APPEX_POLICY_CACHE"] ?? ""
        if configured == "off" || configured == "0" { return nil }
        let dir: String
        if !configured.isEmpty {
            dir = configured
        } else if geteuid() == 0 {
            dir = "/var/cache/appex"
        } else if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            dir = xdg + "/appex"
        } else if let home = environment["HOME"], home.hasPrefix("/") {
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

    /// Owned by us, writable by nobody else, and (for a file) not a link: the only places a
    /// cache is trusted.
    static func isPrivate(_ path: String, directory: Bool) -> Bool {
        var st = stat()
        guard lstat(path, &st) == 0 else { return false }
        let type = st.st_mode & S_IFMT
        guard type == (directory ? S_IFDIR : S_IFREG) else { return false }
        return st.st_uid == geteuid() && st.st_mode & 0o022 == 0
    }

    static func readCache(_ file: String, expecting fingerprint: PolicyFingerprint) -> PolicySet? {
        let fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid(), st.st_mode & 0o022 == 0,
              st.st_size > 24, st.st_size < 16 << 20 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var got = 0
        while got < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, $0.count - got) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            got += n
        }
        var reader = CacheReader(bytes, from: 8)
        guard bytes.count > 24, Array(bytes[0..<8]) == magic,
              reader.int64().map(UInt64.init(bitPattern:)) == fingerprint.value,
              reader.int64().map(UInt64.init(bitPattern:)) == FNV1a.of(bytes[24...]) else { return nil }
        return PolicySet.cacheDecoded(&reader)
    }

    /// Written to a temporary file and renamed into place, so a reader sees an old cache or a
    /// whole new one. Failures only cost the next run a parse.
    static func writeCache(_ set: PolicySet, fingerprint: PolicyFingerprint, to file: String) {
        let payload = set.cacheEncoded()
        var bytes = magic
        withUnsafeBytes(of: fingerprint.value.littleEndian) { bytes += $0 }
        // The payload's own digest: a damaged file (a torn write, a bad disk) is not decoded
        // into a policy that merely parses.
        withUnsafeBytes(of: FNV1a.of(payload).littleEndian) { bytes += $0 }
        bytes += payload
        let temporary = file + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            written += n
        }
        close(fd)
        if written != bytes.count || rename(temporary, file) != 0 { unlink(temporary) }
    }

    /// At most `limit` caches stay (one per directory list in use; overlays in temporary
    /// directories would otherwise leave one each): the least recently written go first.
    static func prune(_ dir: String, keeping current: String, limit: Int = 16) {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [])
            .filter { $0.hasPrefix("policies-") && $0.hasSuffix(".cache") }
        guard names.count > limit else { return }
        let dated = names.map { name -> (String, Int) in
            var st = stat()
            let path = dir + "/" + name
            return (path, lstat(path, &st) == 0 ? st.st_mtim.tv_sec : 0)
        }.filter { $0.0 != current }.sorted { $0.1 < $1.1 }
        for (path, _) in dated.prefix(names.count - limit) { unlink(path) }
    }

    static func hex(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}

extension PolicyFingerprint {
    /// Names the cache file after the directory list, so overlays get caches of their own.
    static func nameHash(_ directories: [String]) -> UInt64 {
        FNV1a.of(directories.joined(separator: "\n").utf8)
    }
}
