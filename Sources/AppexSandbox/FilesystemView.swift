import AppexPolicyCore
import AppexStateDirectory
import CAppexLauncher

#if canImport(Glibc)
import Glibc
#endif

/// One mount operation of the view, with the label a failure is reported under.
public struct MountOperation: Sendable, Equatable {
    public enum Kind: Int32, Sendable {
        case mkdir = 1, mkfile = 2, symlink = 3, bind = 4, tmpfs = 5, proc = 6, mknod = 7, readonlyTree = 8
        /// Attach a mount tree the parent cloned from a descriptor (`open_tree`): no path is
        /// looked up again between the check and the mount.
        case attachTree = 9
    }
    public var kind: Kind
    /// Bind: host source path. Symlink: the link's content. Tmpfs: mount options.
    public var source: String?
    /// Path inside the view (absolute).
    public var target: String
    public var flags: UInt32
    public var mode: UInt32
    /// mknod: the device number.
    public var dev: UInt64 = 0
    /// attachTree: the `open_tree` descriptor (owned by whoever built the operations).
    public var fd: Int32 = -1
    /// `mount data dir`, `mount system path /usr`, … — what an error names.
    public var label: String
}

/// The filesystem an extension sees: a read-only tmpfs root holding only
///
/// | path | what | mode |
/// |---|---|---|
/// | `/var/appex/bundle` | its bundle (or its bare executable) | read-only |
/// | `/var/appex/data` | its container: HOME; TMPDIR is `data/tmp` | read-write, nosuid, nodev |
/// | `/var/appex/groups/<id>` | granted app-group directories | read-write, nosuid, nodev |
/// | `/tmp` | a private tmpfs (charged to its cgroup) | read-write, nosuid, nodev |
/// | `/dev/{null,zero,full,random,urandom}` | device nodes on a small tmpfs | nosuid, noexec |
/// | `/proc` | procfs of its own pid namespace, its own uid's processes only | nosuid, nodev, noexec |
/// | policy paths (`/usr`, `/lib`, …) | host system files | read-only, nosuid, nodev |
///
/// An executable's RUNPATH adds nothing: its entries must resolve inside the bundle or a policy
/// path (`CheckedBundle`).
public enum FilesystemView {
    public static let bundlePath = "/var/appex/bundle"
    public static let dataPath = "/var/appex/data"
    public static let groupsPath = "/var/appex/groups"
    public static let devices = ["null", "zero", "full", "random", "urandom"]

    static let ro = UInt32(APPEX_MNT_RDONLY | APPEX_MNT_NOSUID | APPEX_MNT_NODEV)
    static let rw = UInt32(APPEX_MNT_NOSUID | APPEX_MNT_NODEV)

    /// The executable's path inside the view.
    public static func executablePath(for spec: SandboxSpec) throws -> String {
        let bundle = spec.bundlePath.hasSuffix("/") ? String(spec.bundlePath.dropLast()) : spec.bundlePath
        if spec.executablePath == bundle {
            return bundlePath + "/" + lastComponent(bundle)
        }
        guard spec.executablePath.hasPrefix(bundle + "/") else {
            throw SandboxError(
                "locate executable", path: spec.executablePath, errno: .invalidArgument,
                message: "the executable is not inside the bundle \(bundle)")
        }
        return bundlePath + String(spec.executablePath.dropFirst(bundle.count))
    }

    static func lastComponent(_ p: String) -> String {
        p.split(separator: "/").last.map(String.init) ?? p
    }

    /// The ordered operations that build the view (parents before children). `bundleTree` is
    /// the `open_tree` copy of the checked bundle (`CheckedBundle.cloneTree`), attached as is.
    public static func operations(
        for spec: SandboxSpec, container: Container, bundle: CheckedBundle,
        bundleTree: Int32
    ) throws -> [MountOperation] {
        var ops: [MountOperation] = []
        var dirs: Set<String> = ["/"]
        func mkdirs(_ path: String, mode: UInt32 = 0o755) {
            var cur = ""
            for part in path.split(separator: "/") {
                cur += "/" + String(part)  // a String, not the Substring: see normalize
                if dirs.insert(cur).inserted {
                    ops.append(MountOperation(kind: .mkdir, source: nil, target: cur, flags: 0, mode: mode, label: "create \(cur)"))
                }
            }
        }
        // System paths first, shortest first; a path under one already mounted is covered.
        func depth(_ p: String) -> Int { p.split(separator: "/").count }
        let system = Set(spec.readOnlyPaths.map(normalize)).filter { $0 != "/" && !isReserved($0) }
            .sorted { (depth($0), $0) < (depth($1), $1) }
        var covered: [String] = []
        for path in system {
            if covered.contains(where: { path == $0 || path.hasPrefix($0 + "/") }) { continue }
            guard let st = Sys.lstat(path) else { continue }  // absent on this host: nothing to show
            mkdirs(PolicyLocator.directoryOf(path))  // path is absolute and normalized
            if Sys.isSymlink(st) {
                let target = try Sys.readlink(path)
                ops.append(
                    MountOperation(
                        kind: .symlink, source: target, target: path, flags: 0, mode: 0,
                        label: "link system path \(path)"))
            } else {
                if Sys.isDirectory(st) {
                    mkdirs(path)
                } else {
                    ops.append(
                        MountOperation(
                            kind: .mkfile, source: nil, target: path, flags: 0, mode: 0o644,
                            label: "create \(path)"))
                }
                ops.append(
                    MountOperation(
                        kind: .bind, source: path, target: path, flags: 0, mode: 0,
                        label: "mount system path \(path)"))
            }
            covered.append(path)
        }

        // The bundle, read-only, from its descriptor; a bare executable alone.
        mkdirs(bundlePath)
        if bundle.isDirectory {
            ops.append(
                MountOperation(
                    kind: .attachTree, source: nil, target: bundlePath, flags: 0, mode: 0,
                    fd: bundleTree, label: "mount bundle"))
        } else {
            let file = bundlePath + "/" + lastComponent(spec.bundlePath)
            ops.append(MountOperation(kind: .mkfile, source: nil, target: file, flags: 0, mode: 0o755, label: "create \(file)"))
            ops.append(
                MountOperation(
                    kind: .attachTree, source: nil, target: file, flags: 0, mode: 0,
                    fd: bundleTree, label: "mount bundle"))
        }

        // Mount points of the writable parts, while the root is still writable.
        mkdirs(dataPath)
        for g in container.groups { mkdirs(groupsPath + "/" + g.identifier) }
        mkdirs("/tmp", mode: 0o1777)
        mkdirs("/dev")
        mkdirs("/proc", mode: 0o555)

        // Everything so far read-only, nosuid, nodev in one call (the binds above carry no flags).
        ops.append(
            MountOperation(
                kind: .readonlyTree, source: nil, target: "/", flags: ro, mode: 0,
                label: "make the view read-only"))

        // Its data, read-write.
        ops.append(MountOperation(kind: .bind, source: container.path, target: dataPath, flags: rw, mode: 0, label: "mount data dir"))
        for g in container.groups {
            ops.append(
                MountOperation(
                    kind: .bind, source: g.path, target: groupsPath + "/" + g.identifier, flags: rw, mode: 0,
                    label: "mount app group \(g.identifier)"))
        }
        ops.append(
            MountOperation(
                kind: .tmpfs, source: "mode=1777,size=64m,nr_inodes=16384", target: "/tmp",
                flags: rw, mode: 0, label: "mount /tmp"))

        // /dev: a tiny tmpfs with the device nodes made in it (cheaper than a bind per node).
        ops.append(
            MountOperation(
                kind: .tmpfs, source: "mode=755,size=16k,nr_inodes=32", target: "/dev",
                flags: UInt32(APPEX_MNT_NOSUID | APPEX_MNT_NOEXEC), mode: 0, label: "mount /dev"))
        for d in devices {
            let path = "/dev/" + d
            guard let st = Sys.lstat(path), (st.st_mode & S_IFMT) == S_IFCHR else { continue }
            var op = MountOperation(
                kind: .mknod, source: nil, target: path, flags: 0, mode: UInt32(S_IFCHR) | 0o666,
                label: "create \(path)")
            op.dev = UInt64(st.st_rdev)
            ops.append(op)
        }
        ops.append(MountOperation(kind: .symlink, source: "/proc/self/fd", target: "/dev/fd", flags: 0, mode: 0, label: "link /dev/fd"))

        // hidepid=invisible: only its own uid's processes, not the sandbox init (pid 1).
        ops.append(
            MountOperation(
                kind: .proc, source: "hidepid=invisible", target: "/proc",
                flags: UInt32(APPEX_MNT_NOSUID | APPEX_MNT_NODEV | APPEX_MNT_NOEXEC), mode: 0,
                label: "mount /proc"))
        return ops
    }

    /// Paths the view itself owns: a policy cannot bind host files over them.
    static func isReserved(_ p: String) -> Bool {
        if p.split(separator: "/").contains("..") { return true }
        for r in ["/tmp", "/dev", "/proc", "/var/appex"] where p == r || p.hasPrefix(r + "/") { return true }
        return "/var/appex".hasPrefix(p + "/")  // an ancestor such as /var would hide the view's own paths
    }

    static func normalize(_ p: String) -> String {
        // By hand, not `joined(separator:)` or `String + Substring`: their generic first uses
        // cost a conformance scan each in every `appex run`.
        var out = ""
        for part in p.split(separator: "/") where part != "." && !part.isEmpty {
            out += "/" + String(part)
        }
        return out.isEmpty ? "/" : out
    }
}
