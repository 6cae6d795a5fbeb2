#if canImport(Glibc)
import Glibc
#endif

/// Recomputes an installed bundle's digest, in the order and form `BundleCopier` digests what
/// it writes: entries sorted by name bytes; a directory is `d` and its path inside the bundle;
/// a file is `f`, its path, an execute flag, its size and its bytes.
enum TreeDigest {
    /// The digest of the directory at `path`, or nil when it is missing or holds anything but
    /// regular files and directories (a copy the registry did not write).
    static func digest(ofDirectoryAt path: String) -> ContentDigest? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { DirectoryFD.close(fd) }
        var digest = ContentDigest()
        return walk(fd, relative: "", digest: &digest) ? digest : nil
    }

    private static func walk(_ dir: Int32, relative: String, digest: inout ContentDigest) -> Bool {
        guard let names = try? DirectoryFD.names(in: dir, path: relative) ?? [] else { return false }
        for name in names {
            guard let string = name.string else { return false }
            let path = relative.isEmpty ? string : relative + "/" + string
            var st = stat()
            guard name.withCString({ fstatat(dir, $0, &st, AT_SYMLINK_NOFOLLOW) }) == 0 else { return false }
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                digest.update(byte: UInt8(ascii: "d"))
                digest.update(path)
                guard let child = try? DirectoryFD.open(name, in: dir, path: path) else { return false }
                defer { DirectoryFD.close(child) }
                if !walk(child, relative: path, digest: &digest) { return false }
            case S_IFREG:
                let fd = name.withCString { openat(dir, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
                guard fd >= 0 else { return false }
                defer { DirectoryFD.close(fd) }
                digest.update(byte: UInt8(ascii: "f"))
                digest.update(path)
                digest.update(byte: (st.st_mode & 0o111) != 0 ? 1 : 0)
                digest.update(UInt64(st.st_size))
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    if n < 0 { return false }
                    if n == 0 { break }
                    buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                }
            default:
                return false
            }
        }
        return true
    }
}
