import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A directory tree an extension can make in its container and a path-based `rm -r` cannot
/// remove (issue 30, finding 7): directories nested past any fixed depth, names that are not
/// UTF-8, and symbolic links to things outside it at every level. Made through directory
/// descriptors (the paths get longer than `PATH_MAX`), owned by `owner` as if the extension
/// had made them.
public enum HostileTree {
    /// A name that is not UTF-8.
    public static let invalidName: [UInt8] = [0xFF, 0xFE, UInt8(ascii: "x")]

    /// Makes `depth` nested directories in the existing directory `root`, alternating a plain
    /// and a non-UTF-8 name; each level holds a file, a non-UTF-8 file and a symlink to each
    /// of `linkTargets`, and the deepest also a relative link climbing out. Returns how many
    /// entries it made.
    @discardableResult
    public static func plant(in root: String, depth: Int, linkTargets: [String], owner: (uid: UInt32, gid: UInt32)? = nil) throws -> Int {
        var fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw failure("open", root) }
        defer { close(fd) }
        var made = 0
        func own(_ name: [UInt8], in dir: Int32) throws {
            guard let owner else { return }
            if withName(name, { fchownat(dir, $0, owner.uid, owner.gid, AT_SYMLINK_NOFOLLOW) }) != 0 { throw failure("chown", root) }
        }
        for level in 0..<depth {
            let file = Array("f".utf8), oddFile = invalidName + Array(".txt".utf8)
            for name in [file, oddFile] {
                let f = withName(name) { openat(fd, $0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
                guard f >= 0 else { throw failure("create", root) }
                _ = write(f, "data", 4)
                close(f)
                try own(name, in: fd)
                made += 1
            }
            for (k, target) in linkTargets.enumerated() {
                let name = Array("link\(k)".utf8)
                if withName(name, { symlinkat(target, fd, $0) }) != 0 { throw failure("symlink", root) }
                try own(name, in: fd)
                made += 1
            }
            if level == depth - 1 {
                // As far up as a link's target may say (PATH_MAX).
                let climb = String(repeating: "../", count: min(depth + 4, 1300))
                if withName(Array("climb".utf8), { symlinkat(climb, fd, $0) }) != 0 { throw failure("symlink", root) }
                try own(Array("climb".utf8), in: fd)
                made += 1
                break
            }
            let name = level % 2 == 0 ? Array("d".utf8) : invalidName
            if withName(name, { mkdirat(fd, $0, 0o700) }) != 0 { throw failure("mkdir", root) }
            try own(name, in: fd)
            let next = withName(name) { openat(fd, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            guard next >= 0 else { throw failure("open", root) }
            close(fd)
            fd = next
            made += 1
        }
        return made
    }

    private static func withName<R>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
        (name + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
    }

    private static func failure(_ what: String, _ root: String) -> Error {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO, userInfo: [NSLocalizedDescriptionKey: "\(what) in \(root)"])
    }
}
