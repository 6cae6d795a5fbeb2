import AppexBundle
import AppexELF
import AppexStateDirectory
import CAppexLinux

#if canImport(Glibc)
import Glibc
#endif

/// An extension's bundle and executable, opened once and checked through their descriptors.
///
/// The bundle's author controls every entry in it, and this runs as root, so nothing here
/// looks a path up twice:
/// - the executable is opened beneath the bundle (`openat2` `RESOLVE_BENEATH |
///   RESOLVE_NO_SYMLINKS`, `O_NOFOLLOW | O_NONBLOCK`) and must be a regular file: a link to a
///   host file is refused, and a FIFO is refused at once instead of hanging the supervisor;
/// - its RUNPATH is read from that descriptor and every absolute entry must lie inside a
///   system path the policy shows (nothing is mounted because a RUNPATH names it);
/// - the view mounts the bundle from a descriptor (`open_tree` here, `move_mount` in the
///   launcher), and each launch execs a descriptor opened beneath that mount whose device and
///   inode must be those checked here: what was checked is what is mounted and what runs.
public final class CheckedBundle: Sendable {
    /// The bundle directory (`O_PATH`), or the bare executable file itself.
    let rootFD: Int32
    /// The executable's path relative to the bundle directory; nil for a bare executable.
    public let executableRelativePath: String?
    /// Identity of the checked executable.
    let device: UInt64
    let inode: UInt64
    /// RUNPATH/RPATH entries as written.
    public let runpath: [String]

    /// Opens and checks `spec`'s bundle and executable. Throws a `SandboxError` that names the
    /// executable and what is wrong with it.
    public static func open(_ spec: SandboxSpec) throws -> CheckedBundle {
        var bundle = spec.bundlePath
        while bundle.count > 1 && bundle.hasSuffix("/") { bundle.removeLast() }
        let file: BundleFileAccess.OpenFile
        let rootFD: Int32
        var relative: String?
        if spec.executablePath == bundle {
            // A bare executable: the operator named it; its last component is not followed.
            do { file = try BundleFileAccess.openRegularFile(path: bundle) } catch {
                throw SandboxError("open executable", path: bundle, message: "the executable \(error)")
            }
            rootFD = file.fd
        } else {
            guard spec.executablePath.hasPrefix(bundle + "/") else {
                throw SandboxError(
                    "open executable", path: spec.executablePath, errno: .invalidArgument,
                    message: "the executable is not inside the bundle \(bundle)")
            }
            let rel = String(spec.executablePath.dropFirst(bundle.count + 1))
            relative = rel
            rootFD = try Sys.open(bundle, BundleFileAccess.oPath | O_DIRECTORY)
            do { file = try openBeneath(rootFD, rel) } catch {
                Sys.close(rootFD)
                throw SandboxError("open executable", path: spec.executablePath, message: "the executable \(error)")
            }
        }
        let entries = ELFRunpath.entries(fd: file.fd)
        if relative != nil { Sys.close(file.fd) }
        let refused = RunpathCheck.refused(entries, systemPaths: spec.readOnlyPaths)
        if !refused.isEmpty {
            Sys.close(rootFD)
            throw SandboxError(
                "check executable", path: spec.executablePath, errno: .permissionDenied,
                message:
                    "RUNPATH entry \(refused.map { "\"\($0)\"" }.joined(separator: ", ")) lies outside the bundle and the policy's system paths; refused (appex validate reports it)"
            )
        }
        return CheckedBundle(rootFD: rootFD, relative: relative, device: file.device, inode: file.inode, runpath: entries)
    }

    private init(rootFD: Int32, relative: String?, device: UInt64, inode: UInt64, runpath: [String]) {
        self.rootFD = rootFD
        self.executableRelativePath = relative
        self.device = device
        self.inode = inode
        self.runpath = runpath
    }

    deinit { Sys.close(rootFD) }

    public var isDirectory: Bool { executableRelativePath != nil }

    /// A detached copy of the bundle's mount (not its submounts), for the view to attach.
    func cloneTree() throws -> Int32 {
        let fd = appex_open_tree_clone(rootFD)
        if fd < 0 { throw Sys.fail("open_tree bundle") }
        return fd
    }

    /// The executable, opened beneath `tree` (the bundle's mount in a view) for one `execveat`.
    /// Refused unless it is the file `open` checked. The caller closes it.
    func executable(beneath tree: Int32) throws -> Int32 {
        let fd: Int32
        if let rel = executableRelativePath {
            do { fd = try Self.openBeneath(tree, rel).fd } catch {
                throw SandboxError("open executable", path: rel, message: "the executable \(error)")
            }
        } else {
            // The tree is the file itself: reopen it through our own descriptor.
            fd = try Sys.open("/proc/self/fd/\(tree)", O_RDONLY | O_NONBLOCK)
        }
        var st = stat()
        guard fstat(fd, &st) == 0, UInt64(st.st_dev) == device, UInt64(st.st_ino) == inode else {
            Sys.close(fd)
            throw SandboxError(
                "open executable", path: executableRelativePath, errno: .staleNFSFileHandle,
                message: "the executable changed after it was checked; refused")
        }
        return fd
    }

    static func openBeneath(_ dir: Int32, _ rel: String) throws(BundleFileAccess.Failure) -> BundleFileAccess.OpenFile {
        var fd: Int32
        repeat {
            fd = appex_openat2(dir, rel, UInt64(O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY), 0, ContainerStore.resolveBeneath)
        } while fd < 0 && errno == EINTR
        if fd < 0 { throw BundleFileAccess.openFailure(errno: errno, name: rel) }
        return try BundleFileAccess.regularFile(fd: fd)
    }
}
