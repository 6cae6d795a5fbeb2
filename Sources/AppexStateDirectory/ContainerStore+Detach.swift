#if canImport(Glibc)
import Glibc
#endif

/// A container taken out of use by `ContainerStore.detachContainer`, waiting to be removed.
public struct DetachedContainer: Sendable, Equatable {
    public var bundleIdentifier: String
    /// Its name in `<state>/containers` now.
    public var name: String
    public var path: String
}

/// Removing an extension's data in two steps, so that a removal that fails half way never
/// leaves an installed extension with half its data: the container is first renamed out of
/// use in one step (undone if what follows fails), then removed at leisure; what a removal
/// could not finish is retried by `removeDetachedContainers` (the registry, when it opens).
extension ContainerStore {
    /// Detached containers' names start with this: no identifier starts with `.`.
    static let detachedPrefix = ".removed."

    /// Renames the container of `bundleIdentifier` to a fresh `.removed.` name beside it; nil
    /// when it has none.
    public func detachContainer(for bundleIdentifier: String) throws -> DetachedContainer? {
        try Self.validate(identifier: bundleIdentifier)
        guard let containers = try openContainersIfAny() else { return nil }
        defer { Sys.close(containers) }
        while true {
            let name = Self.detachedPrefix + bundleIdentifier + "." + String(UInt64.random(in: .min ... .max), radix: 16)
            if renameat(containers, bundleIdentifier, containers, name) == 0 {
                return DetachedContainer(bundleIdentifier: bundleIdentifier, name: name, path: stateRoot + "/containers/" + name)
            }
            switch errno {
            case ENOENT: return nil
            case EEXIST, ENOTEMPTY: continue
            default: throw Sys.fail("rename container out of use", containerPath(for: bundleIdentifier))
            }
        }
    }

    /// Puts a detached container back under its identifier.
    public func reattach(_ detached: DetachedContainer) throws {
        try Self.validate(identifier: detached.bundleIdentifier)
        let containers = try openContainers()
        defer { Sys.close(containers) }
        if renameat(containers, detached.name, containers, detached.bundleIdentifier) != 0 {
            throw Sys.fail("rename container back", detached.path)
        }
    }

    public func removeDetached(_ detached: DetachedContainer) throws {
        guard detached.name.hasPrefix(Self.detachedPrefix), !detached.name.contains("/") else {
            throw SandboxError("remove", path: detached.path, errno: .invalidArgument, message: "not a detached container")
        }
        let containers = try openContainers()
        defer { Sys.close(containers) }
        try TreeRemoval.remove(Array(detached.name.utf8), in: containers, display: detached.path)
    }

    /// Removes every detached container an earlier removal left; returns their paths.
    public func removeDetachedContainers() throws -> [String] {
        guard let containers = try openContainersIfAny() else { return [] }
        defer { Sys.close(containers) }
        var removed: [String] = []
        for name in try Self.names(in: containers, path: stateRoot + "/containers") where name.starts(with: Array(Self.detachedPrefix.utf8)) {
            let path = stateRoot + "/containers/" + String(decoding: name, as: UTF8.self)
            try TreeRemoval.remove(name, in: containers, display: path)
            removed.append(path)
        }
        return removed
    }

    private func openContainers() throws -> Int32 {
        try Sys.open(stateRoot + "/containers", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    }

    /// Nil when no extension has had a container yet.
    private func openContainersIfAny() throws -> Int32? {
        do { return try openContainers() } catch let e as SandboxError where e.errno == .noSuchFileOrDirectory { return nil }
    }

    /// The names in a directory, as bytes.
    private static func names(in dir: Int32, path: String) throws -> [[UInt8]] {
        let copy = dup(dir)
        if copy < 0 { throw Sys.fail("dup", path) }
        guard let stream = fdopendir(copy) else {
            let failure = Sys.fail("opendir", path)
            Sys.close(copy)
            throw failure
        }
        defer { closedir(stream) }
        var out: [[UInt8]] = []
        while let entry = readdir(stream) {
            out.append(withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) })
        }
        return out
    }
}
