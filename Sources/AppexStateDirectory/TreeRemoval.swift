import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// `rm -r` of a tree an extension made, whatever its shape: any depth, any names (bytes, not
/// necessarily UTF-8), symbolic links anywhere, entries added while it runs.
///
/// The walk is a loop over an explicit stack of open directory descriptors, never a
/// recursion. Every entry is reached by `openat`/`unlinkat` beneath its parent's descriptor
/// with `O_NOFOLLOW`, so a symbolic link is removed as a link and never followed, and a
/// rename cannot send the walk outside the tree. The stack holds at most
/// `maximumOpenDirectories`: a directory found deeper than that is first renamed to the top
/// of the tree (beneath the tree's own descriptor, under a fresh name) and removed from there,
/// so depth costs neither descriptors nor re-walks. A directory on another device (a mount
/// point) is not entered: the removal stops there with `EXDEV`.
public enum TreeRemoval {
    /// Directory descriptors one removal holds open at most.
    public static let maximumOpenDirectories = 32
    /// Subdirectory names one directory's scan collects before they are visited.
    static let namesPerScan = 256

    private struct Level {
        var name: [UInt8]
        var fd: Int32
        /// Subdirectories found by the last scan and not yet visited.
        var pending: [[UInt8]] = []
    }

    /// Removes `name` beneath the directory `parent` and everything in it; a missing name is
    /// fine. `display` is the path for messages.
    public static func remove(_ name: [UInt8], in parent: Int32, display: String) throws {
        guard try !unlinkUnlessDirectory(name, in: parent, display: display) else { return }
        guard let (rootFD, device) = try openDirectory(name, in: parent, device: nil, display: display) else { return }
        var levels = [Level(name: name, fd: rootFD)]
        defer { for level in levels { Sys.close(level.fd) } }
        var hoisted = 0

        // The top's fields are read in place: a copy of it would copy its pending names.
        while let last = levels.indices.last {
            let fd = levels[last].fd
            if levels[last].pending.isEmpty {
                let subdirectories = try scan(fd, display: path(display, levels))
                if subdirectories.isEmpty {
                    let done = levels.removeLast()
                    Sys.close(done.fd)
                    let above = levels.last?.fd ?? parent
                    if rmdir(done.name, in: above) != 0 && errno != ENOENT {
                        throw fail("rmdir") { levels.isEmpty ? display : path(display, levels, done.name) }
                    }
                    continue
                }
                levels[last].pending = subdirectories
            }
            let child = levels[last].pending.removeLast()
            if levels.count >= maximumOpenDirectories {
                try hoist(child, from: fd, to: levels[0].fd, counter: &hoisted, display: path(display, levels, child))
                continue
            }
            if let (childFD, _) = try openDirectory(child, in: fd, device: device, display: path(display, levels, child)) {
                levels.append(Level(name: child, fd: childFD))
            }
        }
    }

    /// Unlinks `name` unless it is a directory: true when it is gone (or never was).
    private static func unlinkUnlessDirectory(_ name: [UInt8], in dir: Int32, display: @autoclosure () -> String) throws -> Bool {
        if withCName(name, { unlinkat(dir, $0, 0) }) == 0 { return true }
        switch errno {
        case ENOENT: return true
        case EISDIR, EPERM: return false  // a directory (Linux answers EISDIR; POSIX allows EPERM)
        default: throw fail("unlink", display)
        }
    }

    /// Opens the directory `name` beneath `dir` without following a link, checks it is on
    /// `device` (the tree's; nil for the tree itself), and returns it with its device. Nil
    /// when it vanished; a name that turned out not to be a directory is unlinked.
    private static func openDirectory(
        _ name: [UInt8], in dir: Int32, device: UInt64?,
        display: @autoclosure () -> String
    ) throws -> (Int32, UInt64)? {
        while true {
            let fd = withCName(name) { openat(dir, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            if fd >= 0 {
                var st = stat()
                if fstat(fd, &st) != 0 {
                    let failure = fail("fstat", display)
                    Sys.close(fd)
                    throw failure
                }
                if let device, UInt64(st.st_dev) != device {
                    Sys.close(fd)
                    throw SandboxError("remove", path: display(), errno: .improperLink, message: "a mount point inside the tree is not crossed")
                }
                return (fd, UInt64(st.st_dev))
            }
            switch errno {
            case EINTR: continue
            case ENOENT: return nil
            case ENOTDIR, ELOOP:
                // A file or a link (listed as a directory, or replaced since): unlinked instead.
                if withCName(name, { unlinkat(dir, $0, 0) }) == 0 || errno == ENOENT { return nil }
                throw fail("unlink", display)
            default: throw fail("open directory", display)
            }
        }
    }

    /// Unlinks everything in `dir` that is not a directory; returns up to `namesPerScan`
    /// subdirectories (none: `dir` is empty).
    private static func scan(_ dir: Int32, display: @autoclosure () -> String) throws -> [[UInt8]] {
        let copy = dup(dir)
        if copy < 0 { throw fail("dup", display) }
        guard let stream = fdopendir(copy) else {
            let failure = fail("opendir", display)
            Sys.close(copy)
            throw failure
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var subdirectories: [[UInt8]] = []
        while subdirectories.count < namesPerScan {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw fail("readdir", display) }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            if entry.pointee.d_type == UInt8(DT_DIR) {
                subdirectories.append(name)
            } else if try !unlinkUnlessDirectory(name, in: dir, display: display() + "/" + String(decoding: name, as: UTF8.self)) {
                subdirectories.append(name)
            }
        }
        return subdirectories
    }

    /// Moves the directory `name` from `dir` to the top of the tree under a name of its own,
    /// where a later scan of the top finds and removes it.
    private static func hoist(
        _ name: [UInt8], from dir: Int32, to top: Int32, counter: inout Int,
        display: @autoclosure () -> String
    ) throws {
        while true {
            counter += 1
            let fresh = Array(".appex-removing-\(counter)".utf8)
            let rc = withCName(name) { from in withCName(fresh) { to in renameat(dir, from, top, to) } }
            if rc == 0 { return }
            switch errno {
            case ENOENT: return
            // The fresh name is taken (by a file, or a directory that is not empty): the next one.
            case EEXIST, ENOTEMPTY, ENOTDIR, EISDIR: continue
            default: throw fail("rename to the top of the tree", display)
            }
        }
    }

    /// The failure of the call just made: errno read before the path is built.
    private static func fail(_ operation: String, _ display: () -> String) -> SandboxError {
        let code = Errno(rawValue: errno)
        return SandboxError(operation, path: display(), errno: code)
    }

    private static func rmdir(_ name: [UInt8], in dir: Int32) -> Int32 {
        withCName(name) { unlinkat(dir, $0, AT_REMOVEDIR) }
    }

    private static func withCName<R>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
        (name + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }

    /// The path of the stack's top (and of `child` in it) for messages; names shown as UTF-8,
    /// invalid bytes replaced.
    private static func path(_ display: String, _ levels: [Level], _ child: [UInt8]? = nil) -> String {
        let names = levels.dropFirst().map(\.name) + (child.map { [$0] } ?? [])
        return ([display] + names.map { String(decoding: $0, as: UTF8.self) }).joined(separator: "/")
    }
}
