// Thin wrappers over the system calls the parent side uses; each failure
// becomes a SandboxError carrying the operation, the path and the errno.
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

package enum Sys {
    package static var errno: Errno { Errno(rawValue: Glibc.errno) }

    package static func fail(_ op: String, _ path: String? = nil) -> SandboxError {
        SandboxError(op, path: path, errno: errno)
    }

    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0, at dir: Int32 = AT_FDCWD) throws -> Int32 {
        while true {
            let fd = openat(dir, path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if Glibc.errno != EINTR { throw fail("open", path) }
        }
    }

    package static func close(_ fd: Int32) { if fd >= 0 { _ = Glibc.close(fd) } }

    /// mkdir that treats an existing directory as success. Returns true when it made one.
    @discardableResult
    package static func mkdir(_ path: String, mode: mode_t, at dir: Int32 = AT_FDCWD) throws -> Bool {
        if mkdirat(dir, path, mode) == 0 { return true }
        if Glibc.errno == EEXIST { return false }
        throw fail("mkdir", path)
    }

    package static func readAll(fd: Int32) throws -> [UInt8] {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw fail("read")
            }
            if n == 0 { return out }
            out.append(contentsOf: buf[0..<n])
        }
    }

    package static func readFile(_ path: String) throws -> [UInt8] {
        let fd = try open(path, O_RDONLY)
        defer { close(fd) }
        return try readAll(fd: fd)
    }

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

    package static func lstat(_ path: String) -> stat? {
        var st = stat()
        return Glibc.lstat(path, &st) == 0 ? st : nil
    }

    package static func isDirectory(_ st: stat) -> Bool { (st.st_mode & S_IFMT) == S_IFDIR }
    package static func isSymlink(_ st: stat) -> Bool { (st.st_mode & S_IFMT) == S_IFLNK }

    package static func readlink(_ path: String) throws -> String {
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = Glibc.readlink(path, &buf, buf.count - 1)
        if n < 0 { throw fail("readlink", path) }
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A pthread mutex at a fixed heap address (a pthread object must not move), locked and
/// unlocked apart: only for `DescriptorPump`, whose lock spans more than one scope. State
/// behind a plain lock is a `Synchronization.Mutex`.
package final class HeapMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }
}

