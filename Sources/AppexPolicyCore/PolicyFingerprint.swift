import AppexBundle

#if canImport(Glibc)
import Glibc
#endif

/// A 64-bit digest of every file a policy load reads (the same files, in the same order, as
/// `PolicySet.load`): each directory's `defaults.yaml`, `extension-points/*.yaml` and
/// `syscall-groups/*.yaml`, plus the identity of the running executable. Any edit, added
/// file or removed file changes it, so a cached compiled form keyed by it is never stale.
/// FNV-1a: this detects change, it does not authenticate (the cache's trust comes from who
/// owns it; PolicyCache).
///
/// A file counts by name and status (device, inode, size, modification and change times),
/// and by content only while it is *racy*, as git calls it: changed less than `racyWindow`
/// before now. The kernel sets a file's change time to the current time on every write and
/// every `utimensat`, and no call sets it to anything else; so a file whose change time is
/// older than the window and still the same has not been written since, whatever its size
/// and modification time say. A write within the same clock tick as the previous one can leave
/// the change time as it was: such a file is still inside the window and is read. (When a
/// racy file later leaves the window the digest changes once, and the cache is rewritten.)
/// This takes ~35 `stat`s instead of reading and hashing every file on each `appex run`.
///
/// Plain POSIX calls, no Foundation: it runs on every `appex run`.
package struct PolicyFingerprint: Equatable {
    package var value: UInt64
    var files: Int
    /// Files read for their content (racy ones), for tests.
    var filesRead: Int

    /// Longer than any file system's timestamp granularity (1 s on the coarsest), and than the
    /// gap between a write and the cache written after it in one run.
    static let racyWindow: Int64 = 2_000_000_000

    /// nil when a file cannot be read: then the loader's own error should be reported. `now`
    /// (wall clock, ns since the epoch; the clock change times come from) is for tests.
    package static func of(directories: [String], now: Int64? = nil) -> PolicyFingerprint? {
        let now = now ?? wallClockNanos()
        var hash = FNV1a()
        var count = 0, read = 0
        // The build that reads the cache must be the build that wrote it: the executable's
        // identity (device, inode, size, modification time) is part of the key.
        guard let identity = PrivateCacheFile.executableIdentity() else { return nil }
        hash.mix(identity.utf8)
        for (index, dir) in directories.enumerated() {
            hash.mix("dir \(index) \(dir)\n".utf8)
            var names = ["defaults.yaml"]
            for sub in ["extension-points", "syscall-groups"] {
                names += yamlNames(in: dir + "/" + sub).map { sub + "/" + $0 }
            }
            // Each file's status by its name beneath the directory (fstatat): no path string
            // per file, and a shorter walk in the kernel.
            let dirFD = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            defer { if dirFD >= 0 { close(dirFD) } }
            for name in names {
                var st = stat()
                if dirFD < 0 || fstatat(dirFD, name, &st, 0) != 0 {
                    if errno == ENOENT && name == "defaults.yaml" {
                        hash.mix("no defaults\n".utf8)
                        continue
                    }
                    return nil
                }
                let changed = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
                hash.mix("file ".utf8)
                hash.mix(name.utf8)
                hash.mix("\n".utf8)
                // The status fields as raw bytes, from a tuple (no array per file): formatting
                // six integers per file as text cost more than the stats themselves.
                let fields = (
                    UInt64(st.st_dev).littleEndian, UInt64(st.st_ino).littleEndian,
                    UInt64(st.st_size).littleEndian,
                    UInt64(bitPattern: Int64(st.st_mtim.tv_sec)).littleEndian,
                    UInt64(st.st_mtim.tv_nsec).littleEndian,
                    UInt64(bitPattern: Int64(st.st_ctim.tv_sec)).littleEndian,
                    UInt64(st.st_ctim.tv_nsec).littleEndian
                )
                withUnsafeBytes(of: fields) { hash.mix($0) }
                if now - changed < racyWindow {
                    guard mixContent(of: dir + "/" + name, into: &hash) else { return nil }
                    read += 1
                }
                withUnsafeBytes(of: UInt8(0xff)) { hash.mix($0) }
                count += 1
            }
        }
        return PolicyFingerprint(value: hash.value, files: count, filesRead: read)
    }

    private static func mixContent(of path: String, into hash: inout FNV1a) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return false }
            if n == 0 { return true }
            hash.mix(buffer[0..<n])
        }
    }

    static func wallClockNanos() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// `*.yaml` and `*.yml` names in `dir`, sorted as the loader sorts them; none when absent.
    static func yamlNames(in dir: String) -> [String] {
        (directoryNames(dir) ?? []).filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
    }
}

/// 64-bit FNV-1a: the policy fingerprint, the caches' digests, a seccomp program's digest, the names
/// `appex test-policy` derives (change detection and naming, not authentication).
///
/// Bytes are hashed through a raw buffer: every `appex run` hashes the caches' payloads and
/// the seccomp rule list, and the generic `Sequence` loop, left unspecialized across modules,
/// cost a witness call per byte.
package struct FNV1a {
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func mix(_ bytes: UnsafeRawBufferPointer) {
        var v = value
        for b in bytes {
            v ^= UInt64(b)
            v &*= 0x0000_0100_0000_01b3
        }
        value = v
    }

    package mutating func mix(_ bytes: [UInt8]) { bytes.withUnsafeBytes { mix($0) } }
    package mutating func mix(_ bytes: ArraySlice<UInt8>) { bytes.withUnsafeBytes { mix($0) } }
    package mutating func mix(_ text: String.UTF8View) {
        var copy = String(text)
        copy.withUTF8 { mix(UnsafeRawBufferPointer($0)) }
    }

    /// Any other byte sequence.
    package mutating func mix<S: Sequence>(_ bytes: S) where S.Element == UInt8 { mix(Array(bytes)) }

    package static func of(_ bytes: [UInt8]) -> UInt64 {
        var h = FNV1a()
        h.mix(bytes)
        return h.value
    }
    package static func of(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var h = FNV1a()
        h.mix(bytes)
        return h.value
    }
    package static func of(_ text: String.UTF8View) -> UInt64 {
        var h = FNV1a()
        h.mix(text)
        return h.value
    }
    package static func of<S: Sequence>(_ bytes: S) -> UInt64 where S.Element == UInt8 { of(Array(bytes)) }
}
