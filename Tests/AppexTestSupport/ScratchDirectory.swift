import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A directory of one test's own under the temporary directory (`TMPDIR`), made by `mkdtemp`
/// (0700 unless `mode` says otherwise) and removed with everything in it by `remove()` or, at
/// the latest, when the test lets go of it. Tests `defer { scratch.remove() }`: Swift may end
/// an object's life after its last use, not at the end of the scope.
///
/// The removal works beneath directory descriptors, never on paths, so it also takes what a
/// test (or the extension it ran) leaves behind that a path-based `rm -r` cannot: read-only
/// directories, names that are not UTF-8, nesting past `PATH_MAX`, other uids' files (as
/// root). It follows no symbolic link and does not descend into another file system, so a
/// mount a failed test left inside is never emptied.
public final class ScratchDirectory: Sendable {
    public let path: String

    /// `base`: where to make it, when a path must stay short (a socket's, at most 107 bytes).
    public init(_ tag: String, mode: mode_t = 0o700, in base: String = NSTemporaryDirectory()) throws {
        path = try Self.make(tag, mode: mode, in: base)
    }

    deinit { remove() }

    /// Removes the directory and its tree. What cannot go (a mount point) stays; removing
    /// again is harmless.
    public func remove() { try? Self.removeTree(path) }

    /// `path/relative`.
    public func sub(_ relative: String) -> String { path + "/" + relative }

    /// Names in the directory ending in `suffix`.
    public func files(endingIn suffix: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(suffix) }
    }

    /// A fresh directory `BASE/appex-TAG-XXXXXX` with `mode`, for an owner that removes it
    /// itself with `removeTree` (a daemon fixture, a directory shared by a whole suite).
    public static func make(_ tag: String, mode: mode_t = 0o700, in base: String = NSTemporaryDirectory()) throws -> String {
        let pattern = (base.hasSuffix("/") ? base : base + "/") + "appex-\(tag)-XXXXXX"
        var template = Array(pattern.utf8CString)
        guard let made = mkdtemp(&template) else { throw failure("mkdtemp", pattern) }
        let path = String(cString: made)
        if mode != 0o700 && chmod(path, mode) != 0 { throw failure("chmod", path) }
        return path
    }

    /// A fresh directory like `make`'s for a whole suite's `static let` (binaries compiled
    /// once for many tests), removed when the test process exits.
    public static func makeForProcess(_ tag: String, mode: mode_t = 0o700) throws -> String {
        let path = try make(tag, mode: mode)
        let first = processScoped.withLock { paths in
            paths.append(path)
            return paths.count == 1
        }
        if first {
            _ = owner
            atexit {
                // Only the test process itself: a forked child that calls exit() leaves them be.
                guard getpid() == ScratchDirectory.owner else { return }
                for path in ScratchDirectory.processScoped.withLock({ $0 }) { try? ScratchDirectory.removeTree(path) }
            }
        }
        return path
    }

    private static let processScoped = Mutex<[String]>([])
    private static let owner = getpid()

    /// Removes `path` and everything beneath it; nothing there is no error.
    public static func removeTree(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return }
            if errno == ENOTDIR, unlink(path) == 0 { return }
            throw failure("open", path)
        }
        var top = stat()
        guard fstat(fd, &top) == 0 else {
            close(fd)
            throw failure("fstat", path)
        }
        try removeContents(of: fd, device: top.st_dev, path: path)
        guard rmdir(path) == 0 || errno == ENOENT else { throw failure("rmdir", path) }
    }

    /// One directory on the way down: its descriptor and the names in it still to remove.
    private struct Level {
        var fd: Int32
        var name: [UInt8]
        var path: String
        var pending: [[UInt8]]
    }

    /// Empties the directory open at `fd` (and closes it), depth first without recursion (the
    /// tree may be thousands deep): entries are unlinked, each subdirectory on `device` is
    /// entered through a descriptor of its own, made ours to empty when it is read-only, and
    /// removed once empty.
    private static func removeContents(of fd: Int32, device: dev_t, path: String) throws {
        _ = fchmod(fd, 0o700)
        var stack: [Level] = []
        defer { for level in stack { close(level.fd) } }
        do {
            stack.append(Level(fd: fd, name: [], path: path, pending: try names(in: fd, path: path)))
        } catch {
            close(fd)
            throw error
        }
        while let last = stack.indices.last {
            guard let name = stack[last].pending.popLast() else {
                let done = stack.removeLast()
                close(done.fd)
                guard let parent = stack.last else { return }
                guard withName(done.name, { unlinkat(parent.fd, $0, AT_REMOVEDIR) }) == 0 else { throw failure("rmdir", done.path) }
                continue
            }
            let dir = stack[last].fd
            let shown = stack[last].path + "/" + String(decoding: name, as: UTF8.self)
            if withName(name, { unlinkat(dir, $0, 0) }) == 0 || errno == ENOENT { continue }
            guard errno == EISDIR else { throw failure("unlink", shown) }
            var child = withName(name) { openat(dir, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            if child < 0 && errno == EACCES {
                _ = withName(name) { fchmodat(dir, $0, 0o700, 0) }
                child = withName(name) { openat(dir, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            }
            guard child >= 0 else { throw failure("open", shown) }
            var info = stat()
            guard fstat(child, &info) == 0, info.st_dev == device else {
                close(child)
                throw failure("another file system at", shown, EXDEV)
            }
            _ = fchmod(child, 0o700)
            stack.append(Level(fd: child, name: name, path: shown, pending: []))
            stack[stack.count - 1].pending = try names(in: child, path: shown)
        }
    }

    /// The names in the directory open at `fd`, without `.` and `..`, as bytes (not all are UTF-8).
    private static func names(in fd: Int32, path: String) throws -> [[UInt8]] {
        let listing = dup(fd)
        guard listing >= 0, let dir = fdopendir(listing) else {
            if listing >= 0 { close(listing) }
            throw failure("opendir", path)
        }
        defer { closedir(dir) }
        rewinddir(dir)
        var names: [[UInt8]] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            names.append(name)
        }
        return names
    }

    private static func withName<T>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        (name + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
    }

    private static func failure(_ what: String, _ path: String, _ code: Int32 = errno) -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO, userInfo: [NSLocalizedDescriptionKey: "\(what) \(path): errno \(code)"])
    }
}
