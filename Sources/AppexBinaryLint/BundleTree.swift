import AppexBundle

#if canImport(Glibc)
import Glibc
#endif

/// The files of a bundle, opened beneath its directory one path component at a time with
/// `O_NOFOLLOW`: no symbolic link is followed, so nothing outside the directory is reached
/// whatever the bundle's author planted in it, and a FIFO cannot hang the reader.
final class BundleTree {
    let rootFD: Int32
    let rootPath: String

    enum Opened {
        case file(BundleFileAccess.OpenFile)
        case missing
        /// There, but refused: a symbolic link, a directory, a device.
        case refused(String)
    }

    /// Opens `path` as the root (the operator named it, so links on the way are followed).
    init(path: String) throws(BundleFileAccess.Failure) {
        var fd: Int32
        repeat { fd = Glibc.open(path, BundleFileAccess.oPath | O_DIRECTORY | O_CLOEXEC) } while fd < 0 && errno == EINTR
        if fd < 0 { throw BundleFileAccess.openFailure(errno: errno, name: path) }
        rootFD = fd
        rootPath = path
    }

    deinit { Glibc.close(rootFD) }

    static let maxDepth = 64

    /// Opens the regular file at `components` (already normalised: no `.`, `..` or empty
    /// names) for reading. The caller closes the descriptor.
    func open(_ components: [String]) -> Opened {
        guard !components.isEmpty, components.count <= Self.maxDepth,
            components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.contains("/") })
        else {
            return .refused("not a path inside the bundle")
        }
        var dir = rootFD
        defer { if dir != rootFD { close(dir) } }
        for name in components.dropLast() {
            var next: Int32
            repeat { next = openat(dir, name, BundleFileAccess.oPath | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) } while next < 0 && errno == EINTR
            if next < 0 {
                switch errno {
                case ENOENT: return .missing
                // O_PATH | O_NOFOLLOW opens a link itself, which O_DIRECTORY then refuses.
                case ENOTDIR, ELOOP: return .refused("\(name) is a symbolic link or not a directory; links are not followed")
                default: return .refused("\(name): \(String(cString: strerror(errno)))")
                }
            }
            if dir != rootFD { close(dir) }
            dir = next
        }
        var fd: Int32
        repeat { fd = openat(dir, components.last!, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY) } while fd < 0 && errno == EINTR
        if fd < 0 {
            let failure = BundleFileAccess.openFailure(errno: errno, name: components.last!)
            return failure == .missing ? .missing : .refused("it \(failure)")
        }
        do {
            return .file(try BundleFileAccess.regularFile(fd: fd))
        } catch {
            return .refused("it \(error)")
        }
    }
}
