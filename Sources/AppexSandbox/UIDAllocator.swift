#if canImport(Glibc)
import Glibc
#endif

/// Gives every bundle its own unprivileged uid (and gid of the same number), remembered in
/// `<state>/uids` so an extension keeps its uid — and so its files — across launches, as
/// Android does for apps. App groups get a gid from the same range, key `group:<id>`.
///
/// The file is one `key uid` line per entry, updated under an exclusive `flock`, so
/// concurrent supervisors (or tests) never hand out one uid twice.
public struct UIDAllocator: Sendable {
    public let stateRoot: String
    public let range: ClosedRange<UInt32>

    public static let defaultRange: ClosedRange<UInt32> = 200_000...265_535

    public init(stateRoot: String, range: ClosedRange<UInt32> = UIDAllocator.defaultRange) {
        self.stateRoot = stateRoot
        self.range = range
    }

    public var file: String { stateRoot + "/uids" }

    /// The uid for `bundleIdentifier`, allocating the lowest free one on first use.
    public func uid(for bundleIdentifier: String) throws -> UInt32 {
        try ContainerStore.validate(identifier: bundleIdentifier)
        return try id(forKey: bundleIdentifier)
    }

    /// The uid (and gid) of the init of `bundleIdentifier`'s sandboxes: from the same range,
    /// distinct from every extension's and every other sandbox's.
    public func sandboxInitUID(for bundleIdentifier: String) throws -> UInt32 {
        try ContainerStore.validate(identifier: bundleIdentifier)
        return try id(forKey: "sandbox-init:" + bundleIdentifier)
    }

    /// The gid shared by the members of an app group.
    public func gid(forGroup group: String) throws -> UInt32 {
        try ContainerStore.validate(identifier: group)
        return try id(forKey: "group:" + group)
    }

    /// All assignments, for `appex` reports and tests.
    public func assignments() throws -> [String: UInt32] {
        try withLockedFile { fd in try Self.parse(try Sys.readAll(fd: fd)) }
    }

    func id(forKey key: String) throws -> UInt32 {
        try UIDRangeCheck.verify(range)
        return try withLockedFile { fd in
            var table = try Self.parse(try Sys.readAll(fd: fd))
            if let known = table[key] { return known }
            let used = Set(table.values)
            guard let free = range.first(where: { !used.contains($0) }) else {
                throw SandboxError("allocate uid", path: file, errno: .noSpace,
                                   message: "all \(range.count) uids of \(range) are assigned")
            }
            table[key] = free
            // Append, then flush: a crash leaves either the old or the new table.
            if lseek(fd, 0, SEEK_END) < 0 { throw Sys.fail("lseek", file) }
            try Sys.writeAll(fd: fd, Array("\(key) \(free)\n".utf8), path: file)
            _ = fsync(fd)
            return free
        }
    }

    private func withLockedFile<R>(_ body: (Int32) throws -> R) throws -> R {
        try Sys.mkdir(stateRoot, mode: 0o755)
        let fd = try Sys.open(file, O_RDWR | O_CREAT | O_NOFOLLOW, mode: 0o600)
        defer { Sys.close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { throw Sys.fail("flock", file) }
        }
        defer { _ = flock(fd, LOCK_UN) }
        return try body(fd)
    }

    static func parse(_ bytes: [UInt8]) throws -> [String: UInt32] {
        var table: [String: UInt32] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let v = UInt32(parts[1]) else { continue }
            table[String(parts[0])] = v
        }
        return table
    }
}
