import CAppexLinux
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Thin wrappers over the few system calls cgroupfs needs. Every failure becomes a
// CgroupError naming the operation and the path.

enum Sys {
    // Not exported by the Glibc module; values are the x86_64/aarch64 ABI.
    static let O_PATH: Int32 = 0o10000000
    static let O_DIRECTORY: Int32 = 0o200000

    static var errno: Errno { Errno(rawValue: Glibc.errno) }

    static func fail(_ op: String, _ path: String, _ e: Errno? = nil) -> CgroupError {
        CgroupError(op, path: path, errno: e ?? Sys.errno)
    }

    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if Glibc.errno == EINTR { continue }
            throw fail("open", path)
        }
    }

    static func close(_ fd: Int32) {
        // Linux releases the descriptor even when close reports EINTR: never retry.
        _ = Glibc.close(fd)
    }

    /// Reads a whole (small) file. cgroupfs files report size 0, so read to EOF.
    static func readFile(_ path: String) throws -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }

    /// `readFile` as bytes, for text parsed byte by byte (mountinfo).
    static func readBytes(_ path: String) throws -> [UInt8] {
        let fd = try open(path, O_RDONLY)
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw fail("read", path)
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return bytes
    }

    /// Writes `value` with one write(2): cgroupfs parses each write as one command.
    static func writeFile(_ path: String, _ value: String) throws {
        // O_TRUNC is ignored by cgroupfs and keeps a fake tree's file exact.
        let fd = try open(path, O_WRONLY | O_TRUNC)
        defer { close(fd) }
        try writeAll(fd, value, path: path)
    }

    static func writeAll(_ fd: Int32, _ value: String, path: String) throws {
        var bytes = Array(value.utf8)
        let total = bytes.count
        while true {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw fail("write \"\(value)\" to", path)
            }
            if n != total {
                throw CgroupError("write \"\(value)\" to", path: path, message: "short write (\(n) of \(total))")
            }
            return
        }
    }

    static func mkdir(_ path: String, mode: mode_t = 0o755) throws -> Bool {
        if Glibc.mkdir(path, mode) == 0 { return true }
        if Glibc.errno == EEXIST { return false }
        throw fail("mkdir", path)
    }

    /// rmdir that tolerates an already removed directory. Returns whether it removed it.
    static func rmdir(_ path: String) throws -> Bool {
        if Glibc.rmdir(path) == 0 { return true }
        if Glibc.errno == ENOENT { return false }
        throw fail("rmdir", path)
    }

    static func exists(_ path: String) -> Bool {
        Glibc.access(path, F_OK) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Names of the subdirectories of `path` (cgroups are directories; control files are not);
    /// none when `path` does not exist (a parent cgroup may be removed at any moment: asked
    /// first and opened after, it could vanish in between).
    static func subdirectories(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else {
            if Glibc.errno == ENOENT { return [] }
            throw fail("opendir", path)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let ent = readdir(dir) {
            let name = withUnsafeBytes(of: ent.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            if Int32(ent.pointee.d_type) == Int32(DT_DIR) || (ent.pointee.d_type == UInt8(DT_UNKNOWN) && isDirectory(path + "/" + name)) {
                names.append(name)
            }
        }
        return names.sorted()
    }

    /// eventfd(2), which the Glibc module does not export: through CAppexLinux's wrapper
    /// (not a dlsym lookup, which finds nothing in a static executable such as a release appex).
    static func eventfd(nonblocking: Bool = false) throws -> Int32 {
        let fd = appex_eventfd_cloexec(nonblocking ? 1 : 0)
        if fd < 0 { throw fail("eventfd", "") }
        return fd
    }

    /// Reads and discards whatever is pending on a nonblocking-safe fd (eventfd counter, inotify events).
    static func drain(_ fd: Int32) {
        var buf = [UInt8](repeating: 0, count: 4096)
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while Glibc.poll(&p, 1, 0) > 0 && (p.revents & Int16(POLLIN)) != 0 {
            let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
        }
    }

    /// poll(2) on several fds; returns the revents per fd. `timeoutMs` < 0 waits forever.
    static func poll(_ fds: [(Int32, Int16)], timeoutMs: Int32) throws -> [Int16] {
        var pfds = fds.map { pollfd(fd: $0.0, events: $0.1, revents: 0) }
        while true {
            let r = Glibc.poll(&pfds, nfds_t(pfds.count), timeoutMs)
            if r >= 0 { return pfds.map(\.revents) }
            if Glibc.errno == EINTR { continue }
            throw fail("poll", "")
        }
    }

    static func monotonicNanos() -> UInt64 { MonotonicTime.now }

    static func sleep(milliseconds: Int) {
        var ts = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var rem = timespec()
        while nanosleep(&ts, &rem) != 0 && Glibc.errno == EINTR { ts = rem }
    }
}

/// A tiny mutex-protected box, so the final classes of this module can be Sendable
/// without depending on the Synchronization module's OS availability.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
