#if canImport(Glibc)
import Glibc
#endif

/// A 64-bit digest of every file a policy load reads (the same files, in the same order, as
/// `PolicySet.load`): each directory's `defaults.yaml`, `extension-points/*.yaml` and
/// `syscall-groups/*.yaml`, by name and content, plus the identity of the running executable. Any edit, added file or removed file changes
/// it, so a cached compiled form keyed by it is never stale. FNV-1a: this detects change, it
/// does not authenticate (the cache's trust comes from who owns it; PolicyCache).
///
/// Plain POSIX reads, no Foundation: it runs on every `appex run`, and its whole budget is a
/// few hundred µs for ~35 small files.
struct PolicyFingerprint: Equatable {
    var value: UInt64
    var files: Int

    /// nil when a file cannot be read: then the loader's own error should be reported.
    static func of(directories: [String]) -> PolicyFingerprint? {
        var hash = FNV1a()
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        // The build that reads the cache must be the build that wrote it: the executable's
        // identity (device, inode, size, modification time) is part of the key.
        guard let identity = PrivateCacheFile.executableIdentity() else { return nil }
        func mix<S: Sequence>(_ bytes: S) where S.Element == UInt8 { hash.mix(bytes) }
        mix(identity.utf8)
        for (index, dir) in directories.enumerated() {
            mix("dir \(index) \(dir)\n".utf8)
            var names = ["defaults.yaml"]
            for sub in ["extension-points", "syscall-groups"] {
                names += yamlNames(in: dir + "/" + sub).map { sub + "/" + $0 }
            }
            for name in names {
                let path = dir + "/" + name
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                if fd < 0 {
                    if errno == ENOENT && name == "defaults.yaml" { mix("no defaults\n".utf8); continue }
                    return nil
                }
                defer { close(fd) }
                mix("file \(name)\n".utf8)
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    if n < 0 { return nil }
                    if n == 0 { break }
                    mix(buffer[0..<n])
                }
                mix([0xff])
                count += 1
            }
        }
        return PolicyFingerprint(value: hash.value, files: count)
    }

    /// `*.yaml` and `*.yml` names in `dir`, sorted as the loader sorts them; none when absent.
    static func yamlNames(in dir: String) -> [String] {
        (directoryNames(dir) ?? []).filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
    }
}

/// 64-bit FNV-1a: the policy fingerprint, the caches' digests, a seccomp program's digest, the names
/// `appex test-policy` derives (change detection and naming, not authentication).
package struct FNV1a {
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func mix<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        for b in bytes {
            value ^= UInt64(b)
            value &*= 0x0000_0100_0000_01b3
        }
    }

    package static func of<S: Sequence>(_ bytes: S) -> UInt64 where S.Element == UInt8 {
        var h = FNV1a()
        h.mix(bytes)
        return h.value
    }
}
