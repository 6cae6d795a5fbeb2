import AppexBundle
import CAppexLinux
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// One extension's private data directory on the host.
public struct Container: Sendable, Equatable {
    public var bundleIdentifier: String
    /// `<state>/containers/<bundle-id>`, mounted read-write at `FilesystemView.dataPath`.
    public var path: String
    public var uid: UInt32
    public var gid: UInt32
    /// App-group directories the extension gets, with the gid their members share.
    public var groups: [GroupDirectory]
}

public struct GroupDirectory: Sendable, Equatable {
    public var identifier: String
    public var path: String
    public var gid: UInt32
}

/// The state root's layout and the private containers in it.
///
/// ```
/// <state>/uids                    uid assignments (UIDAllocator)
/// <state>/containers/             root 0711
/// <state>/containers/<id>/        <uid> 0700: Documents/ Library/Caches/ tmp/
/// <state>/groups/<group>/         root:<group gid> 02770
/// <state>/logs/<id>.log[.1]       the extension's stdout and stderr, copied by Appex, rotated
/// <state>/rootfs/                 empty; each launch mounts its view's tmpfs here, privately
/// ```
///
/// Everything below the state root is created and opened with `openat2(RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS)` relative to the directory above, so a hostile identifier or a
/// symlink planted inside a container cannot redirect it elsewhere.
public struct ContainerStore: Sendable {
    public let stateRoot: String
    public let uids: UIDAllocator

    public init(stateRoot: String, uidRange: ClosedRange<UInt32> = UIDAllocator.defaultRange) {
        self.stateRoot = stateRoot
        self.uids = UIDAllocator(stateRoot: stateRoot, range: uidRange)
    }

    public static let containerSubdirectories = ["Documents", "Library", "Library/Caches", "tmp"]

    /// Rejects identifiers that are not one safe path component.
    public static func validate(identifier: String) throws {
        if let problem = BundleIdentifierRules.pathSafetyProblem(identifier) {
            throw SandboxError("validate identifier", path: identifier, errno: .invalidArgument, message: "identifier \(problem)")
        }
    }

    public func containerPath(for bundleIdentifier: String) -> String { stateRoot + "/containers/" + bundleIdentifier }
    public func groupPath(for group: String) -> String { stateRoot + "/groups/" + group }
    public func logPath(for bundleIdentifier: String) -> String { stateRoot + "/logs/" + bundleIdentifier + ".log" }
    public var rootfsPath: String { stateRoot + "/rootfs" }

    /// Creates (or re-checks) the container and group directories for one launch.
    public func prepare(bundleIdentifier: String, appGroups: [String] = []) throws -> Container {
        let container = try plan(bundleIdentifier: bundleIdentifier, appGroups: appGroups)
        try makeDirectories(for: container)
        return container
    }

    /// The container `prepare` makes, before anything is made: its uid and its app groups'
    /// gids from the uid table (allocated on first use), and the paths. A sandbox can be
    /// planned on it while `makeDirectories` runs (`ExtensionRun.prepare`).
    public func plan(bundleIdentifier: String, appGroups: [String] = []) throws -> Container {
        try Self.validate(identifier: bundleIdentifier)
        let uid = try uids.uid(for: bundleIdentifier)
        let groups = try appGroups.sorted().map { group in
            GroupDirectory(identifier: group, path: groupPath(for: group), gid: try uids.gid(forGroup: group))
        }
        return Container(
            bundleIdentifier: bundleIdentifier, path: containerPath(for: bundleIdentifier),
            uid: uid, gid: uid, groups: groups)
    }

    /// Makes (or re-checks: owner, mode, no symlink on the way) the directories `container`
    /// names, beneath the state root: the container and its subdirectories, its app groups'
    /// directories, the logs and the rootfs mount point.
    public func makeDirectories(for container: Container) throws {
        // The value's fields are public and mutable: checked again where they name paths.
        try Self.validate(identifier: container.bundleIdentifier)
        for group in container.groups { try Self.validate(identifier: group.identifier) }
        let root = try openStateRoot()
        defer { Sys.close(root) }

        let containers = try Self.directory(beneath: root, "containers", mode: 0o711, owner: (0, 0))
        defer { Sys.close(containers) }
        let uid = container.uid
        let fd = try Self.directory(beneath: containers, container.bundleIdentifier, mode: 0o700, owner: (uid, uid))
        defer { Sys.close(fd) }
        for sub in Self.containerSubdirectories {
            Sys.close(try Self.directory(beneath: fd, sub, mode: 0o700, owner: (uid, uid)))
        }

        if !container.groups.isEmpty {
            let groupsFD = try Self.directory(beneath: root, "groups", mode: 0o711, owner: (0, 0))
            defer { Sys.close(groupsFD) }
            for group in container.groups {
                Sys.close(try Self.directory(beneath: groupsFD, group.identifier, mode: 0o2770, owner: (0, group.gid)))
            }
        }
        Sys.close(try Self.directory(beneath: root, "logs", mode: 0o700, owner: (0, 0)))
        Sys.close(try Self.directory(beneath: root, "rootfs", mode: 0o755, owner: (0, 0)))
    }

    /// Removes a container and everything in it (for `appex uninstall` and tests).
    public func removeContainer(for bundleIdentifier: String) throws {
        try Self.validate(identifier: bundleIdentifier)
        try Self.removeTree(containerPath(for: bundleIdentifier))
    }

    /// Removes an app group's directory and everything in it (`appex uninstall --remove-data`
    /// of the group's owner).
    public func removeGroup(_ group: String) throws {
        try Self.validate(identifier: group)
        try Self.removeTree(groupPath(for: group))
    }

    package static let resolveBeneath: UInt64 = 0x08 | 0x04  // RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS

    package func openStateRoot() throws -> Int32 {
        try Sys.mkdir(stateRoot, mode: 0o755)
        return try Sys.open(stateRoot, O_RDONLY | O_DIRECTORY)
    }

    /// mkdir + open beneath `dir` without following symlinks, then enforce owner and mode.
    /// `name` may have several components (`Library/Caches`): each is made and opened beneath
    /// the one before, so a component an extension replaced with a symlink stops the walk
    /// (ELOOP) before root creates, chowns or chmods anything outside the container.
    /// Intermediate components get the same owner and mode.
    package static func directory(beneath dir: Int32, _ name: String, mode: mode_t, owner: (UInt32, UInt32)) throws -> Int32 {
        let parts = name.split(separator: "/").map(String.init)
        guard !parts.isEmpty, !parts.contains(".."), !parts.contains(".") else {
            throw SandboxError("mkdir", path: name, errno: .invalidArgument, message: "not a relative path of plain names")
        }
        var current = dir
        var owned = false
        defer { if owned { Sys.close(current) } }
        for part in parts {
            let next = try component(beneath: current, part, mode: mode, owner: owner)
            if owned { Sys.close(current) }
            current = next
            owned = true
        }
        owned = false
        return current
    }

    /// One directory entry: made with `mkdirat` (which never follows a final symlink), opened
    /// with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, then owner and mode set on the fd.
    private static func component(beneath dir: Int32, _ name: String, mode: mode_t, owner: (UInt32, UInt32)) throws -> Int32 {
        let made = mkdirat(dir, name, mode) == 0
        if !made && errno != EEXIST { throw Sys.fail("mkdir", name) }
        let fd = appex_openat2(dir, name, UInt64(O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW), 0, resolveBeneath)
        if fd < 0 { throw Sys.fail("open beneath state root", name) }
        var st = stat()
        if fstat(fd, &st) != 0 {
            Sys.close(fd)
            throw Sys.fail("fstat", name)
        }
        if st.st_uid != owner.0 || st.st_gid != owner.1 {
            if fchown(fd, owner.0, owner.1) != 0 {
                Sys.close(fd)
                throw Sys.fail("chown", name)
            }
        }
        // chmod after chown: chown clears the setgid bit.
        if (st.st_mode & 0o7777) != mode || st.st_uid != owner.0 || st.st_gid != owner.1 {
            if fchmod(fd, mode) != 0 {
                Sys.close(fd)
                throw Sys.fail("chmod", name)
            }
        }
        return fd
    }

    /// rm -r without following symlinks (`TreeRemoval`). `path` itself is named by Appex (a
    /// container, a test directory); only its last component is removed beneath its parent.
    package static func removeTree(_ path: String) throws {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else {
            throw SandboxError("remove", path: path, errno: .invalidArgument, message: "not an absolute path")
        }
        let parentPath = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
        let name = String(trimmed[trimmed.index(after: slash)...])
        guard !name.isEmpty, name != ".", name != ".." else {
            throw SandboxError("remove", path: path, errno: .invalidArgument)
        }
        let parent: Int32
        do { parent = try Sys.open(parentPath, O_RDONLY | O_DIRECTORY) } catch let e as SandboxError where e.errno == .noSuchFileOrDirectory {
            return
        }
        defer { Sys.close(parent) }
        try TreeRemoval.remove(Array(name.utf8), in: parent, display: path)
    }
}
