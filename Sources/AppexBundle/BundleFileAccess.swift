#if canImport(Glibc)
import Glibc
#endif

/// Opens files inside a bundle the way code running as root must: the bundle's author controls
/// every entry, so an entry is opened once, beneath the bundle's directory descriptor, without
/// following a symbolic link and without blocking on a FIFO, and only a regular file is
/// accepted. Whatever is checked afterwards is read from that descriptor.
public enum BundleFileAccess {
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case missing
        case symbolicLink
        /// A directory, FIFO, socket or device: `kind` says which.
        case notRegularFile(kind: String)
        case tooLarge(limit: Int)
        case system(operation: String, errno: Int32)

        public var description: String {
            switch self {
            case .missing: "does not exist"
            case .symbolicLink: "is a symbolic link (refused: a bundle's files are opened without following links)"
            case .notRegularFile(let kind): "is a \(kind), not a regular file"
            case .tooLarge(let limit): "is larger than \(limit) bytes"
            case .system(let op, let e): "\(op) failed: \(String(cString: strerror(e)))"
            }
        }
    }

    /// An open regular file and what `fstat` said of it. The caller closes `fd`.
    public struct OpenFile: Sendable {
        public let fd: Int32
        public let size: Int
        public let mode: UInt32
        public let device: UInt64
        public let inode: UInt64
        public var isExecutable: Bool { mode & 0o111 != 0 }
    }

    /// Opens `name` (one path component) in the directory `directory` for reading.
    public static func openRegularFile(named name: String, in directory: String) throws(Failure) -> OpenFile {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw .system(operation: "open \(name)", errno: EINVAL)
        }
        let dir = open(directory, oPath | O_DIRECTORY | O_CLOEXEC)
        if dir < 0 { throw .system(operation: "open \(directory)", errno: errno) }
        defer { close(dir) }
        return try openRegularFile(at: dir, name: name)
    }

    /// Opens a file named by the operator (a bare executable): the last component is not
    /// followed if it is a link, and a FIFO does not block.
    public static func openRegularFile(path: String) throws(Failure) -> OpenFile {
        try openRegularFile(at: AT_FDCWD, name: path)
    }

    static func openRegularFile(at dir: Int32, name: String) throws(Failure) -> OpenFile {
        var fd: Int32
        repeat { fd = openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY) } while fd < 0 && errno == EINTR
        if fd < 0 { throw openFailure(errno: errno, name: name) }
        return try regularFile(fd: fd)
    }

    /// What a failed `open`/`openat2` of a bundle entry means: ELOOP is the refused link.
    public static func openFailure(errno e: Int32, name: String) -> Failure {
        switch e {
        case ENOENT: .missing
        case ELOOP: .symbolicLink
        case ENXIO: .notRegularFile(kind: "socket")  // open(2) of a socket
        case EXDEV: .system(operation: "open \(name) beneath the bundle (it leaves the bundle)", errno: e)
        default: .system(operation: "open \(name)", errno: e)
        }
    }

    /// `fstat`s a descriptor just opened and accepts it only as a regular file; on failure it
    /// is closed.
    public static func regularFile(fd: Int32) throws(Failure) -> OpenFile {
        var st = stat()
        if fstat(fd, &st) != 0 {
            let e = errno
            close(fd)
            throw .system(operation: "fstat", errno: e)
        }
        let type = st.st_mode & S_IFMT
        guard type == S_IFREG else {
            close(fd)
            throw .notRegularFile(kind: kindName(type))
        }
        return OpenFile(
            fd: fd, size: Int(st.st_size), mode: UInt32(st.st_mode & 0o7777),
            device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// Reads the whole file from `fd`, refusing more than `limit` bytes.
    public static func readAll(_ file: OpenFile, limit: Int) throws(Failure) -> [UInt8] {
        if file.size > limit { throw .tooLarge(limit: limit) }
        var out: [UInt8] = []
        out.reserveCapacity(file.size)
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { read(file.fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .system(operation: "read", errno: errno)
            }
            if n == 0 { return out }
            out.append(contentsOf: buf[0..<n])
            if out.count > limit { throw .tooLarge(limit: limit) }
        }
    }

    /// The first `count` bytes (fewer when the file is shorter).
    public static func prefix(_ file: OpenFile, count: Int) -> [UInt8] {
        var buf = [UInt8](repeating: 0, count: count)
        let n = buf.withUnsafeMutableBytes { pread(file.fd, $0.baseAddress, count, 0) }
        return n > 0 ? Array(buf.prefix(n)) : []
    }

    /// O_PATH (Glibc does not export it to Swift): a descriptor for lookups, opening nothing.
    public static let oPath: Int32 = 0o10000000

    static func kindName(_ type: mode_t) -> String {
        switch type {
        case S_IFDIR: "directory"
        case S_IFIFO: "FIFO"
        case S_IFSOCK: "socket"
        case S_IFCHR: "character device"
        case S_IFBLK: "block device"
        case S_IFLNK: "symbolic link"
        default: "special file"
        }
    }
}

/// Which RUNPATH entries an extension may keep: the dynamic loader searches them, and a view
/// that showed them would show the host's directories to the extension.
public enum RunpathCheck {
    /// The library directories every policy shows (as Policies/defaults.yaml lists them).
    public static let defaultSystemPaths = ["/usr", "/lib", "/lib64", "/opt/swift/usr/lib/swift/linux"]

    /// Absolute entries that lie outside every one of `systemPaths` (or climb with `..`).
    /// `$ORIGIN` entries resolve inside the bundle and relative ones inside the view: neither
    /// needs anything mounted, so neither is refused.
    public static func refused(_ entries: [String], systemPaths: [String]) -> [String] {
        entries.filter { entry in
            guard entry.hasPrefix("/") else { return false }
            let parts = entry.split(separator: "/")
            if parts.contains("..") { return true }
            let normalized = "/" + parts.filter { $0 != "." }.joined(separator: "/")
            return !systemPaths.contains { root in
                let r = root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
                return r != "/" && (normalized == r || normalized.hasPrefix(r + "/"))
            }
        }
    }
}
