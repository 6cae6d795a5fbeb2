import CAppexLinux
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Thin wrappers over the system calls Appex's Swift code makes itself: each retries EINTR
/// where the call may be interrupted, opens close-on-exec, and reports a failure as
/// swift-system's `Errno` with the context it leaves out (the operation and the path), in
/// the error vocabulary of the module that calls it.
///
/// Each module names its own: `typealias Sys = SystemCalls<CgroupError>` in AppexCgroups,
/// `SystemCalls<SandboxError>` in AppexSandbox, `SystemCalls<SystemCallError>` elsewhere.
package enum SystemCalls<Failure: SystemCallFailure> {
    // Not exported by the Glibc module; values are the x86_64/aarch64 ABI.
    package static var O_PATH: Int32 { 0o10000000 }
    package static var O_DIRECTORY: Int32 { 0o200000 }

    package static var errno: Errno { Errno(rawValue: Glibc.errno) }

    /// The failure of `operation` on `path`, with `errno` (the calling thread's by default).
    package static func fail(_ operation: String, _ path: String? = nil, _ errno: Errno? = nil) -> Failure {
        Failure(systemCall: operation, path: path, errno: errno ?? Self.errno, message: nil)
    }

    /// openat(2) with O_CLOEXEC added; relative paths are resolved beneath `dir`.
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0, at dir: Int32 = AT_FDCWD) throws -> Int32 {
        while true {
            let fd = openat(dir, path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if Glibc.errno != EINTR { throw fail("open", path) }
        }
    }

    /// Linux releases the descriptor even when close reports EINTR: never retried.
    package static func close(_ fd: Int32) { if fd >= 0 { _ = Glibc.close(fd) } }

    /// Everything from `fd`'s position to its end. Files under /proc and cgroupfs report size
    /// 0, so this reads to EOF instead of trusting fstat. With `limit`, it stops as soon as it
    /// holds more than `limit` bytes: a caller that refuses large files sees the excess without
    /// reading all of it.
    package static func readAll(fd: Int32, path: String? = nil, limit: Int = .max) throws -> [UInt8] {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw fail("read", path)
            }
            if n == 0 { return out }
            out.append(contentsOf: buf[0..<n])
            if out.count > limit { return out }
        }
    }

    /// A whole (small) file as bytes.
    package static func readBytes(_ path: String) throws -> [UInt8] {
        let fd = try open(path, O_RDONLY)
        defer { close(fd) }
        return try readAll(fd: fd, path: path)
    }

    /// A whole (small) file as text.
    package static func readFile(_ path: String) throws -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }

    /// Writes `value` to `path` with one write(2): cgroupfs and procfs parse each write as one
    /// command, so a short write is an error, not something to continue.
    package static func writeFile(_ path: String, _ value: String) throws {
        // O_TRUNC is ignored by cgroupfs and keeps a fake tree's file exact.
        let fd = try open(path, O_WRONLY | O_TRUNC)
        defer { close(fd) }
        try writeCommand(fd, value, path: path)
    }

    /// `value` with one write(2) to an open control file (see `writeFile`).
    package static func writeCommand(_ fd: Int32, _ value: String, path: String) throws {
        var bytes = Array(value.utf8)
        let total = bytes.count
        while true {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw fail("write \"\(value)\" to", path)
            }
            if n != total {
                throw Failure(systemCall: "write \"\(value)\" to", path: path, errno: nil, message: "short write (\(n) of \(total))")
            }
            return
        }
    }

    /// All of `bytes` to `fd`, continuing after short writes (logs, pipes, regular files).
    package static func writeAll(fd: Int32, _ bytes: [UInt8], path: String? = nil) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, bytes.count - off) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw fail("write", path)
            }
            off += n
        }
    }

    /// mkdir that treats an existing entry as success. Returns true when it made the directory.
    @discardableResult
    package static func mkdir(_ path: String, mode: mode_t = 0o755, at dir: Int32 = AT_FDCWD) throws -> Bool {
        if mkdirat(dir, path, mode) == 0 { return true }
        if Glibc.errno == EEXIST { return false }
        throw fail("mkdir", path)
    }

    /// rmdir that tolerates an already removed directory. Returns whether it removed it.
    @discardableResult
    package static func rmdir(_ path: String) throws -> Bool {
        if Glibc.rmdir(path) == 0 { return true }
        if Glibc.errno == ENOENT { return false }
        throw fail("rmdir", path)
    }

    package static func exists(_ path: String) -> Bool {
        Glibc.access(path, F_OK) == 0
    }

    package static func lstat(_ path: String) -> stat? {
        var st = stat()
        return Glibc.lstat(path, &st) == 0 ? st : nil
    }

    package static func isDirectory(_ st: stat) -> Bool { (st.st_mode & S_IFMT) == S_IFDIR }
    package static func isSymlink(_ st: stat) -> Bool { (st.st_mode & S_IFMT) == S_IFLNK }

    /// Whether `path` itself (not what a symbolic link there names) is a directory.
    package static func isDirectory(_ path: String) -> Bool {
        lstat(path).map(isDirectory) ?? false
    }

    package static func readlink(_ path: String) throws -> String {
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = Glibc.readlink(path, &buf, buf.count - 1)
        if n < 0 { throw fail("readlink", path) }
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Names of the subdirectories of `path` (cgroups are directories; control files are not);
    /// none when `path` does not exist (a parent cgroup may be removed at any moment: asked
    /// first and opened after, it could vanish in between).
    package static func subdirectories(_ path: String) throws -> [String] {
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

    /// eventfd(2), which the Glibc module does not export: through CAppexLinux's wrapper (not
    /// a dlsym lookup, which finds nothing in a static executable such as a release appex).
    package static func eventfd(nonblocking: Bool = false) throws -> Int32 {
        let fd = appex_eventfd_cloexec(nonblocking ? 1 : 0)
        if fd < 0 { throw fail("eventfd") }
        return fd
    }

    /// Reads and discards whatever is pending on a nonblocking-safe fd (eventfd counter, inotify events).
    package static func drain(_ fd: Int32) {
        var buf = [UInt8](repeating: 0, count: 4096)
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while Glibc.poll(&p, 1, 0) > 0 && (p.revents & Int16(POLLIN)) != 0 {
            let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
        }
    }

    /// poll(2) on several fds; returns the revents per fd. `timeoutMs` < 0 waits forever.
    package static func poll(_ fds: [(Int32, Int16)], timeoutMs: Int32) throws -> [Int16] {
        var pfds = fds.map { pollfd(fd: $0.0, events: $0.1, revents: 0) }
        while true {
            let r = Glibc.poll(&pfds, nfds_t(pfds.count), timeoutMs)
            if r >= 0 { return pfds.map(\.revents) }
            if Glibc.errno == EINTR { continue }
            throw fail("poll")
        }
    }

    /// nanosleep for the whole time, resumed after signals.
    package static func sleep(milliseconds: Int) {
        var ts = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var rem = timespec()
        while nanosleep(&ts, &rem) != 0 && Glibc.errno == EINTR { ts = rem }
    }
}
