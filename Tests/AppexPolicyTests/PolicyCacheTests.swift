import AppexTestSupport
import Foundation
import Testing

@testable import AppexPolicy
@testable import AppexPolicyCore

#if canImport(Glibc)
import Glibc
#endif

/// The compiled-policy cache: a hit is the parse, any edit is seen, a damaged or foreign
/// cache is never believed, and a broken policy is never cached.
@Suite struct PolicyCacheTests {
    /// A private (0700) cache directory of the test's own, removed at the end.
    final class CacheDirectory {
        let scratch: ScratchDirectory
        init() throws { scratch = try ScratchDirectory("policy-cache") }
        var path: String { scratch.path }
        var files: [String] { scratch.files(endingIn: ".cache") }
        var cacheFile: String { path + "/" + files[0] }
    }

    @Test func aHitIsTheParsedSet() throws {
        let tree = try PolicyTree()
        let cache = try CacheDirectory()
        let parsed = try PolicySet.load(directories: [tree.path])
        let first = try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path)
        #expect(cache.files.count == 1, "the first load writes the cache")
        let second = try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path)
        #expect(first == parsed && second == parsed)
        let mode = try FileManager.default.attributesOfItem(atPath: cache.cacheFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// Same size, same modification time, different content: still seen.
    @Test func anEditIsSeenEvenWithTheSameSizeAndTime() throws {
        let tree = try PolicyTree()
        let cache = try CacheDirectory()
        let file = tree.file("extension-points/widget.yaml")
        let before = try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let limit = try #require(before.policy(for: "com.apple.widget-extension")?.memory.activeHardLimit)
        #expect(limit == .mebibytes(16))
        var st = stat()
        stat(file, &st)
        let edited = text.replacingOccurrences(of: "16MiB", with: "17MiB")
        try #require(edited != text && edited.utf8.count == text.utf8.count)
        try edited.write(toFile: file, atomically: false, encoding: .utf8)
        var times = [st.st_atim, st.st_mtim]
        utimensat(AT_FDCWD, file, &times, 0)
        let after = try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path)
        #expect(after.policy(for: "com.apple.widget-extension")?.memory.activeHardLimit == .mebibytes(17))
    }

    /// A file changed more than the racy window ago is known by its status, not read; one
    /// changed within it is read. Either way an edit changes the fingerprint.
    @Test func onlyRacyFilesAreRead() throws {
        let tree = try PolicyTree()
        let recent = try #require(PolicyFingerprint.of(directories: [tree.path]))
        #expect(recent.files > 20 && recent.filesRead == recent.files, "just copied: every file is racy")
        let later = PolicyFingerprint.wallClockNanos() + PolicyFingerprint.racyWindow + 1_000_000_000
        let settled = try #require(PolicyFingerprint.of(directories: [tree.path], now: later))
        #expect(settled.filesRead == 0 && settled.files == recent.files)
        #expect(settled.value != recent.value, "a racy file's content is part of the digest")
        #expect(PolicyFingerprint.of(directories: [tree.path], now: later) == settled)
    }

    /// Same size, same modification time, different content, outside the racy window: seen
    /// through the change time the write set, which no caller can set back.
    @Test func anEditOutsideTheRacyWindowIsSeenByItsChangeTime() throws {
        let tree = try PolicyTree()
        let cache = try CacheDirectory()
        let file = tree.file("extension-points/widget.yaml")
        // Both loads run as if the files had settled long ago.
        let later = PolicyFingerprint.wallClockNanos() + 60_000_000_000
        let before = try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path, now: later)
        #expect(before.policy(for: "com.apple.widget-extension")?.memory.activeHardLimit == .mebibytes(16))
        let settled = try #require(PolicyFingerprint.of(directories: [tree.path], now: later))
        #expect(PolicyCache.readCache(cache.cacheFile, expecting: settled) != nil, "cached under the status-only digest")
        var st = stat()
        stat(file, &st)
        // Past the coarsest timestamp tick, so the write's change time differs from the copy's.
        usleep(20_000)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        try text.replacingOccurrences(of: "16MiB", with: "17MiB").write(toFile: file, atomically: false, encoding: .utf8)
        var times = [st.st_atim, st.st_mtim]
        utimensat(AT_FDCWD, file, &times, 0)
        var after = stat()
        stat(file, &after)
        try #require(after.st_size == st.st_size && after.st_mtim.tv_nsec == st.st_mtim.tv_nsec && after.st_ino == st.st_ino)
        let reloaded = try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path, now: later)
        #expect(reloaded.policy(for: "com.apple.widget-extension")?.memory.activeHardLimit == .mebibytes(17))
    }

    /// The cache stores each distinct policy once: identifiers that share a file share it, and
    /// one an overlay changes alone keeps its own.
    @Test func identifiersSharingAFileButNotAPolicyStayApart() throws {
        let overlay = try PolicyTree(copyShipped: false)
        try overlay.write(
            "extension-points/safari-extension.yaml",
            """
            extensionPoints: [com.apple.Safari.extension]
            memory:
              activeHardLimit: 20MiB
              activeSoftLimit: 10MiB
            """)
        let cache = try CacheDirectory()
        let later = PolicyFingerprint.wallClockNanos() + 60_000_000_000
        let dirs = [shippedPolicies, overlay.path]
        let parsed = try PolicySet.load(directories: dirs)
        _ = try PolicyCache.load(directories: dirs, cacheDirectory: cache.path, now: later)
        let fingerprint = try #require(PolicyFingerprint.of(directories: dirs, now: later))
        let cached = try #require(PolicyCache.readCache(cache.cacheFile, expecting: fingerprint))
        #expect(cached == parsed)
        #expect(cached.policy(for: "com.apple.Safari.extension")?.memory.activeHardLimit == .mebibytes(20))
        #expect(cached.policy(for: "com.apple.Safari.web-extension")?.memory.activeHardLimit == .mebibytes(48))
        #expect(cached.policy(for: "com.apple.Safari.content-blocker") == cached.policy(for: "com.apple.Safari.web-extension"))
    }

    @Test func anAddedOrRemovedFileIsSeen() throws {
        let tree = try PolicyTree()
        let cache = try CacheDirectory()
        _ = try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path)
        try tree.write("extension-points/extra.yaml", "extensionPoints: [dev.appex.extra]\ntitle: Extra\n")
        #expect(try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path).policy(for: "dev.appex.extra") != nil)
        try FileManager.default.removeItem(atPath: tree.file("extension-points/extra.yaml"))
        #expect(try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path).policy(for: "dev.appex.extra") == nil)
    }

    @Test func aBrokenPolicyIsNeverCached() throws {
        let tree = try PolicyTree()
        let cache = try CacheDirectory()
        try tree.write("extension-points/bad.yaml", "extensionPoints: [dev.appex.bad]\nmaxInstances: many\n")
        for _ in 0..<2 {
            #expect(throws: PolicyErrors.self) { try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path) }
        }
        #expect(cache.files.isEmpty)
    }

    /// Every truncation and a flipped byte anywhere: the load still returns the parsed set
    /// (never a trap, never a wrong set), and a good cache is written again.
    @Test func aDamagedCacheIsIgnoredAndRewritten() throws {
        let tree = try PolicyTree()
        let cache = try CacheDirectory()
        // One clock for every load: the files must not leave the racy window halfway through
        // (that changes the key once, and the rewritten file with it).
        let later = PolicyFingerprint.wallClockNanos() + 60_000_000_000
        let parsed = try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path, now: later)
        let good = try Data(contentsOf: URL(fileURLWithPath: cache.cacheFile))
        var damaged: [Data] = stride(from: 0, to: good.count, by: max(1, good.count / 97)).map { good.prefix($0) }
        for offset in [0, 9, 20, 30, good.count / 2, good.count - 1] {
            var d = good
            d[offset] ^= 0x5a
            damaged.append(d)
        }
        for d in damaged {
            try d.write(to: URL(fileURLWithPath: cache.cacheFile))
            chmod(cache.cacheFile, 0o600)
            let loaded = try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path, now: later)
            #expect(loaded == parsed)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: cache.cacheFile)) == good, "rewritten whole")
    }

    /// The decoder alone on prefixes of every length class (every field boundary near the end,
    /// a spread elsewhere): nil, never a trap.
    @Test func theDecoderRejectsEveryTruncation() throws {
        let set = try PolicySet.load(directories: [shippedPolicies])
        let bytes = set.cacheEncoded()
        var reader = CacheReader(bytes, from: 0)
        #expect(PolicySet.cacheDecoded(&reader) == set)
        let lengths = Set(Array(stride(from: 0, to: bytes.count, by: 37)) + Array(max(0, bytes.count - 300)..<bytes.count))
        for n in lengths.sorted() {
            var r = CacheReader(Array(bytes.prefix(n)), from: 0)
            #expect(PolicySet.cacheDecoded(&r) == nil)
        }
    }

    /// `appex run` decodes one point's records (`cacheDecoded(only:)`): for every shipped
    /// identifier, and one no policy covers, that is the narrowed set, and the policy a run
    /// resolves from it is the one the whole set gives.
    @Test func aNarrowedReadIsTheNarrowedSetAndResolvesTheSame() throws {
        let set = try PolicySet.load(directories: [shippedPolicies])
        let bytes = set.cacheEncoded()
        for point in set.byExtensionPoint.keys.sorted() + ["dev.appex.covered-by-nothing"] {
            var r = CacheReader(bytes, from: 0)
            let narrow = try #require(PolicySet.cacheDecoded(&r, only: point), "\(point)")
            #expect(narrow == set.narrowed(to: point), "\(point)")
            #expect(narrow.byExtensionPoint.count <= 1 && narrow.groups.count <= set.groups.count)
            let whole = EffectivePolicy(extensionPoint: point, in: set)
            let fromNarrow = EffectivePolicy(extensionPoint: point, in: narrow)
            #expect(fromNarrow.policy == whole.policy && fromNarrow.usesDefaults == whole.usesDefaults, "\(point)")
            #expect(fromNarrow.syscallRules == whole.syscallRules && !whole.syscallRules.isEmpty, "\(point)")
        }
    }

    /// Through the cache file: a hit read for one point is that point's narrowed set.
    @Test func aNarrowedHitIsTheNarrowedParse() throws {
        let tree = try PolicyTree()
        let cache = try CacheDirectory()
        let parsed = try PolicySet.load(directories: [tree.path])
        let miss = try PolicyCache.load(directories: [tree.path], only: "com.apple.widget-extension", cacheDirectory: cache.path)
        #expect(cache.files.count == 1, "a narrowed miss still caches the whole set")
        let hit = try PolicyCache.load(directories: [tree.path], only: "com.apple.widget-extension", cacheDirectory: cache.path)
        #expect(miss == parsed.narrowed(to: "com.apple.widget-extension") && hit == miss)
        #expect(try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path) == parsed, "and the whole set from it")
    }

    /// The narrowed decoder checks the whole payload's framing too: every truncation is nil.
    @Test func theNarrowedDecoderRejectsEveryTruncation() throws {
        let set = try PolicySet.load(directories: [shippedPolicies])
        let bytes = set.cacheEncoded()
        let lengths = Set(Array(stride(from: 0, to: bytes.count, by: 37)) + Array(max(0, bytes.count - 300)..<bytes.count))
        for n in lengths.sorted() {
            var r = CacheReader(Array(bytes.prefix(n)), from: 0)
            #expect(PolicySet.cacheDecoded(&r, only: "com.apple.widget-extension") == nil)
        }
    }

    /// A cache directory others may write to is not used: its files could be anyone's.
    @Test func aSharedDirectoryIsNotUsed() throws {
        let tree = try PolicyTree()
        let cache = try CacheDirectory()
        chmod(cache.path, 0o777)
        _ = try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path)
        #expect(cache.files.isEmpty)
    }

    /// A cache file of another owner, or a link, is not read, even with the right fingerprint.
    @Test(.requiresRoot("changing a file's owner needs root")) func aForeignOrLinkedCacheFileIsNotRead() throws {
        let tree = try PolicyTree()
        let cache = try CacheDirectory()
        _ = try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path)
        let file = cache.cacheFile
        // A cache that says something else, with the right header: believed only if ours.
        var forged = try PolicySet.load(directories: [tree.path])
        forged.defaults.title = "forged"
        let header = try Data(contentsOf: URL(fileURLWithPath: file)).prefix(16)
        func sealed(_ set: PolicySet) -> Data {
            let payload = set.cacheEncoded()
            return header + withUnsafeBytes(of: PrivateCacheFile.digest(payload[...]).littleEndian) { Data($0) } + Data(payload)
        }
        try sealed(forged).write(to: URL(fileURLWithPath: file))
        chmod(file, 0o600)
        chown(file, 12345, 12345)
        #expect(try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path).defaults.title != "forged")

        let elsewhere = cache.path + "/elsewhere"
        try sealed(forged).write(to: URL(fileURLWithPath: elsewhere))
        chmod(elsewhere, 0o600)
        try FileManager.default.removeItem(atPath: file)
        symlink(elsewhere, file)
        #expect(try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path).defaults.title != "forged")

        // The same forged bytes in a file of ours are believed: the check above is what stopped it.
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.moveItem(atPath: elsewhere, toPath: file)
        #expect(try PolicyCache.load(directories: [tree.path], cacheDirectory: cache.path).defaults.title == "forged")
    }

    @Test func cachingCanBeTurnedOff() {
        #expect(PolicyCache.directory(environment: ["APPEX_POLICY_CACHE": "off", "HOME": "/root"]) == nil)
        #expect(PolicyCache.directory(environment: ["APPEX_POLICY_CACHE": "0"]) == nil)
    }
}
