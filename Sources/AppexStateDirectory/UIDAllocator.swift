import Synchronization

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
        try withLockedFile { fd in Self.parse(try Sys.readAll(fd: fd)) }
    }

    func id(forKey key: String) throws -> UInt32 {
        try UIDRangeCheck.verify(range)
        // Entries are only ever appended, so one known here stays true while the file is the
        // same file: no lock, no read. (Each launch asks twice; parsing the whole table each
        // time was most of a launch's CPU with 1,000 extensions installed.)
        if let cached = Self.cache.withLock({ $0[file] }), let known = cached.table[key], Self.unchanged(file, cached) {
            return known
        }
        return try withLockedFile { fd in
            let table = try Self.refresh(file, fd: fd)
            if let known = table.table[key] { return known }
            guard let free = range.first(where: { !table.used.contains($0) }) else {
                throw SandboxError(
                    "allocate uid", path: file, errno: .noSpace,
                    message: "all \(range.count) uids of \(range) are assigned")
            }
            // Append, then flush: a crash leaves either the old or the new table. A line a
            // crashed writer left unfinished is closed first with "#", which no entry parses
            // through, so neither it nor ours is misread.
            var line = Array("\(key) \(free)\n".utf8)
            let end = lseek(fd, 0, SEEK_END)
            if end < 0 { throw Sys.fail("lseek", file) }
            var last: UInt8 = 10
            if end > 0 && pread(fd, &last, 1, end - 1) == 1 && last != 10 { line = Array("#\n".utf8) + line }
            try Sys.writeAll(fd: fd, line, path: file)
            _ = fsync(fd)
            var st = stat()
            _ = fstat(fd, &st)
            Self.cache.withLock { c in
                c[file]?.table[key] = free
                c[file]?.used.insert(free)
                c[file]?.parsedBytes = Int(end) + line.count
                c[file]?.seen = FileState(st)
            }
            return free
        }
    }

    /// What identifies a file's state: when all of it is as last seen, nothing was appended
    /// and the file was not replaced.
    struct FileState: Equatable {
        var device: UInt64, inode: UInt64, size: Int64, mtimeSeconds: Int, mtimeNanos: Int
        init(_ st: stat) {
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
            size = Int64(st.st_size)
            mtimeSeconds = st.st_mtim.tv_sec
            mtimeNanos = st.st_mtim.tv_nsec
        }
    }

    /// What this process has read of a table file: the file as last seen, its first bytes (a
    /// file replaced under the same path may get the same inode number back), how far it has
    /// been parsed, and the entries so far.
    struct CachedTable {
        var seen: FileState
        var head: [UInt8]
        var parsedBytes: Int
        var table: [String: UInt32]
        var used: Set<UInt32>
    }

    private static let cache = Mutex<[String: CachedTable]>([:])
    private static let headLength = 64

    private static func unchanged(_ path: String, _ cached: CachedTable) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && FileState(st) == cached.seen
    }

    /// Under the lock: the cached table brought up to date with what was appended since (by
    /// this process or another), or read whole when the file is new or was replaced.
    private static func refresh(_ path: String, fd: Int32) throws -> CachedTable {
        var st = stat()
        if fstat(fd, &st) != 0 { throw Sys.fail("fstat", path) }
        let state = FileState(st)
        let size = Int(st.st_size)
        if var e = cache.withLock({ $0[path] }), e.seen.device == state.device, e.seen.inode == state.inode,
            e.parsedBytes <= size, try readHead(fd, path, upTo: e.head.count) == e.head
        {
            if e.parsedBytes < size {
                var tail = [UInt8](repeating: 0, count: size - e.parsedBytes)
                let n = tail.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(e.parsedBytes)) }
                if n < 0 { throw Sys.fail("read", path) }
                // Only whole lines: one a writer is still appending (or left unfinished) waits.
                let whole = tail[..<n].lastIndex(of: 10).map { $0 + 1 } ?? 0
                for (k, v) in parse(Array(tail[..<whole])) {
                    e.table[k] = v
                    e.used.insert(v)
                }
                e.parsedBytes += whole
                if e.head.count < headLength { e.head = try readHead(fd, path, upTo: headLength) }
            }
            e.seen = state
            let result = e
            cache.withLock { $0[path] = result }
            return result
        }
        let bytes = try Sys.readAll(fd: fd)
        let whole = bytes.lastIndex(of: 10).map { $0 + 1 } ?? 0
        let table = parse(Array(bytes[..<whole]))
        let entry = CachedTable(
            seen: state, head: Array(bytes.prefix(headLength)), parsedBytes: whole,
            table: table, used: Set(table.values))
        cache.withLock { $0[path] = entry }
        return entry
    }

    private static func readHead(_ fd: Int32, _ path: String, upTo count: Int) throws -> [UInt8] {
        var head = [UInt8](repeating: 0, count: count)
        let n = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 { throw Sys.fail("read", path) }
        return Array(head[..<n])
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

    /// `key uid` lines; anything else is skipped.
    static func parse(_ bytes: [UInt8]) -> [String: UInt32] {
        var table: [String: UInt32] = [:]
        var lineStart = 0
        for i in bytes.indices where bytes[i] == 10 || i == bytes.count - 1 {
            let end = bytes[i] == 10 ? i : i + 1
            defer { lineStart = i + 1 }
            guard let space = bytes[lineStart..<end].firstIndex(of: 32), space > lineStart else { continue }
            var value: UInt64 = 0
            var ok = space + 1 < end
            for b in bytes[(space + 1)..<end] {
                guard b >= 48 && b <= 57 else {
                    ok = false
                    break
                }
                value = value * 10 + UInt64(b - 48)
                guard value <= UInt64(UInt32.max) else {
                    ok = false
                    break
                }
            }
            guard ok else { continue }
            table[String(decoding: bytes[lineStart..<space], as: UTF8.self)] = UInt32(value)
        }
        return table
    }
}
