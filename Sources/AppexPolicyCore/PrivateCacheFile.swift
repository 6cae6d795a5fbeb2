import AppexBundle

#if canImport(Glibc)
import Glibc
#endif

/// One file of a cache that a root process takes compiled sandbox rules from (the policy set,
/// the seccomp programs). Who may have written it matters more than what it says: a file is
/// read only from a directory owned by the effective uid that no one else may write, only when
/// it is a regular file owned by that uid, opened without following a link, and only when its
/// header names what the caller expects.
///
/// Layout: an 8-byte magic, the caller's 64-bit key, the payload's `digest` (a torn write or
/// a bad disk is not decoded into something that merely parses), then the payload. Written to a
/// temporary file and renamed into place, so a reader sees an old file or a whole new one;
/// a failed write only costs the next run a compile.
package enum PrivateCacheFile {
    static let headerSize = 24

    /// The payload of `path` when the file is private and its header matches; nil otherwise.
    package static func read(_ path: String, magic: [UInt8], key: UInt64, maxBytes: Int = 16 << 20) -> [UInt8]? {
        precondition(magic.count == 8)
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid(), st.st_mode & 0o022 == 0,
            st.st_size >= headerSize, st.st_size <= maxBytes
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var got = 0
        while got < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, $0.count - got) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            got += n
        }
        var reader = CacheReader(bytes, from: 8)
        guard Array(bytes[0..<8]) == magic,
            reader.int64().map(UInt64.init(bitPattern:)) == key,
            reader.int64().map(UInt64.init(bitPattern:)) == digest(bytes[headerSize...])
        else { return nil }
        return Array(bytes[headerSize...])
    }

    /// The payload's digest: FNV-1a's step taken on 64-bit little-endian words, then on the
    /// bytes after the last whole word. Each step is a bijection of the running value, so a
    /// payload that differs in one word (any one corrupted byte) always gets another digest.
    /// Every `appex run` checks the whole policy payload: this takes an eighth of the
    /// multiplies of FNV-1a byte by byte. Change detection, not authentication: a cache is
    /// trusted for who wrote it (above).
    package static func digest(_ payload: ArraySlice<UInt8>) -> UInt64 {
        let prime: UInt64 = 0x0000_0100_0000_01b3
        return payload.withUnsafeBytes { raw in
            var v: UInt64 = 0xcbf2_9ce4_8422_2325
            let words = raw.count / 8
            for i in 0..<words {
                v ^= UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
                v &*= prime
            }
            for i in (words * 8)..<raw.count {
                v ^= UInt64(raw[i])
                v &*= prime
            }
            return v
        }
    }

    /// Writes `payload` under the header (mode 0600), replacing `path` atomically.
    package static func write(_ path: String, magic: [UInt8], key: UInt64, payload: [UInt8]) {
        precondition(magic.count == 8)
        var bytes = magic
        withUnsafeBytes(of: key.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: digest(payload[...]).littleEndian) { bytes += $0 }
        bytes += payload
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            written += n
        }
        close(fd)
        if written != bytes.count || rename(temporary, path) != 0 { unlink(temporary) }
    }

    /// Owned by us, writable by nobody else, and (for a file) not a link: the only places a
    /// cache is trusted.
    package static func isPrivate(_ path: String, directory: Bool) -> Bool {
        var st = stat()
        guard lstat(path, &st) == 0 else { return false }
        let type = st.st_mode & S_IFMT
        guard type == (directory ? S_IFDIR : S_IFREG) else { return false }
        return st.st_uid == geteuid() && st.st_mode & 0o022 == 0
    }

    /// At most `limit` files named `prefix…suffix` stay in `dir` (one per distinct key in use;
    /// overlays in temporary directories would otherwise leave one each): the least recently
    /// written go first, never `current`.
    package static func prune(_ dir: String, prefix: String, suffix: String, keeping current: String, limit: Int) {
        guard let names = directoryNames(dir)?.filter({ $0.hasPrefix(prefix) && $0.hasSuffix(suffix) }),
            names.count > limit
        else { return }
        let dated = names.map { name -> (String, Int) in
            var st = stat()
            let path = dir + "/" + name
            return (path, lstat(path, &st) == 0 ? st.st_mtim.tv_sec : 0)
        }.filter { $0.0 != current }.sorted { $0.1 < $1.1 }
        for (path, _) in dated.prefix(names.count - limit) { unlink(path) }
    }

    /// The running executable's identity (device, inode, size, modification time): part of
    /// every key, so the build that reads a cache is the build that wrote it.
    package static func executableIdentity() -> String? { runningExecutable }

    /// Set by the `appex` front to its own identity when it hands a command line to the full
    /// tool (`appex-commands`), so both executables of one build key the caches alike. It only
    /// names a key: what a cache file may be trusted for is still decided by who owns it.
    package static let identityVariable = "APPEX_EXECUTABLE_IDENTITY"

    // Once per process: both caches' keys ask (the policy fingerprint, the seccomp program's
    // key), and /proc/self/exe names the mapped file, which stays what it was.
    private static let runningExecutable: String? = {
        if let handedOver = ProcessEnvironment.value(identityVariable), !handedOver.isEmpty { return handedOver }
        var exe = stat()
        guard stat("/proc/self/exe", &exe) == 0 else { return nil }
        return "exe \(exe.st_dev) \(exe.st_ino) \(exe.st_size) \(exe.st_mtim.tv_sec).\(exe.st_mtim.tv_nsec)\n"
    }()

    /// 16 lowercase hex digits, for file names.
    package static func hex(_ v: UInt64) -> String {
        // By hand, not String(_:radix:): its generic first use shows in every `appex run`.
        let digits = Array("0123456789abcdef".utf8)
        let bytes = (0..<16).map { i in digits[Int((v >> UInt64(60 - 4 * i)) & 0xf)] }
        return String(decoding: bytes, as: UTF8.self)
    }
}
