import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

/// A directory entry's name as the kernel gave it: bytes, which need not be UTF-8.
struct EntryName: Hashable, Comparable {
    var bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }
    init(_ string: String) { bytes = Array(string.utf8) }

    /// The name when it is valid UTF-8.
    var string: String? { String(validating: bytes, as: UTF8.self) }
    /// The name for messages, invalid bytes shown as U+FFFD.
    var display: String { String(decoding: bytes, as: UTF8.self) }
    var isDotted: Bool { bytes.first == UInt8(ascii: ".") }

    func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try (bytes + [0]).withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }

    static func < (a: EntryName, b: EntryName) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
}

/// Directory-fd calls for the registry. Every name is a single component, opened beneath its
/// parent's fd without following symbolic links; failures name the operation and the path.
enum DirectoryFD {
    static func fail(_ operation: String, _ path: String, _ code: Int32 = errno) -> RegistryError {
        .system(operation: operation, path: path, errno: code)
    }

    static func close(_ fd: Int32) { if fd >= 0 { _ = Glibc.close(fd) } }

    /// Opens the directory `name` beneath `parent`; a symlink there fails with ELOOP.
    static func open(_ name: EntryName, in parent: Int32, path: String) throws -> Int32 {
        while true {
            let fd = name.withCString { openat(parent, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            if fd >= 0 { return fd }
            if errno != EINTR { throw fail("open directory", path) }
        }
    }

    /// Creates (or re-uses) the directory `name` beneath `parent`, root-owned when we are
    /// root, with exactly `mode`, and opens it.
    static func make(_ name: EntryName, in parent: Int32, mode: mode_t, path: String) throws -> Int32 {
        let made = name.withCString { mkdirat(parent, $0, mode) } == 0
        if !made && errno != EEXIST { throw fail("mkdir", path) }
        let fd = try open(name, in: parent, path: path)
        do {
            try own(fd, mode: mode, path: path)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Makes an fd root-owned (when we are root) with exactly `mode`: umask and the source's
    /// owner never leak into the state directory, and no setuid/setgid bit survives.
    static func own(_ fd: Int32, mode: mode_t, path: String) throws {
        if geteuid() == 0, fchown(fd, 0, 0) != 0 { throw fail("chown", path) }
        if fchmod(fd, mode) != 0 { throw fail("chmod", path) }
    }

    /// The names in a directory, sorted by bytes, without `.` and `..`. Returns nil as soon as
    /// there are more than `limit`: a hostile directory cannot make us hold millions of names.
    static func names(in dir: Int32, path: String, limit: Int = .max) throws -> [EntryName]? {
        let copy = dup(dir)
        if copy < 0 { throw fail("dup", path) }
        guard let stream = fdopendir(copy) else {
            let code = errno
            close(copy)
            throw fail("opendir", path, code)
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var out: [EntryName] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw fail("readdir", path) }
                break
            }
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix(while: { $0 != 0 })) }
            if bytes == [UInt8(ascii: ".")] || bytes == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            out.append(EntryName(bytes: bytes))
            if out.count > limit { return nil }
        }
        return out.sorted()
    }

    /// lstat of `name` beneath `parent`; nil when it does not exist.
    static func lstat(_ name: EntryName, in parent: Int32, path: String) throws -> stat? {
        var st = stat()
        if name.withCString({ fstatat(parent, $0, &st, AT_SYMLINK_NOFOLLOW) }) == 0 { return st }
        if errno == ENOENT { return nil }
        throw fail("stat", path)
    }

    /// `rm -r` of `name` beneath `parent`, never following a symlink, at any depth
    /// (`TreeRemoval`); a missing name is fine.
    static func removeTree(_ name: EntryName, in parent: Int32, path: String) throws {
        do {
            try TreeRemoval.remove(name.bytes, in: parent, display: path)
        } catch let error as SandboxError {
            throw RegistryError.system(operation: error.operation, path: error.path ?? path, errno: error.errno?.rawValue ?? EIO)
        }
    }

    static func fsync(_ fd: Int32, path: String) throws {
        while Glibc.fsync(fd) != 0 {
            if errno != EINTR { throw fail("fsync", path) }
        }
    }

    static func rename(_ from: EntryName, in fromDir: Int32, to: EntryName, in toDir: Int32, path: String) throws {
        let rc = from.withCString { f in to.withCString { t in renameat(fromDir, f, toDir, t) } }
        if rc != 0 { throw fail("rename into", path) }
    }
}
