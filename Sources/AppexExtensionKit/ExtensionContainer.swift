#if canImport(Glibc)
import Glibc
#endif

/// The extension's data container: inside the sandbox, `HOME` is the container, private to the
/// extension and kept across launches. A few file operations on it, for extensions that keep
/// state without Foundation.
public enum ExtensionContainer {
    /// `HOME`, the container's root.
    public static func root() throws(ContainerError) -> String {
        guard let raw = getenv("HOME"), raw.pointee != 0 else { throw ContainerError(operation: "HOME", path: "", errno: ENOENT) }
        return String(cString: raw)
    }

    /// `relativePath` under the container, created with its parents when missing.
    public static func directory(_ relativePath: String) throws(ContainerError) -> String {
        var path = try root()
        for component in relativePath.split(separator: "/") {
            path += "/" + component
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw ContainerError(operation: "mkdir", path: path, errno: errno)
            }
        }
        return path
    }

    /// The file's bytes, or nil when it does not exist.
    public static func read(_ path: String) throws(ContainerError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw ContainerError(operation: "open", path: path, errno: errno)
        }
        defer { close(fd) }
        do {
            return try DescriptorIO.readAll(fd, index: 0)
        } catch {
            throw ContainerError(operation: "read", path: path, errno: error.errno)
        }
    }

    /// Replaces the file with `bytes` (write then rename: a reader, or a kill mid-write, sees
    /// the old content or the new, never half).
    public static func write(_ bytes: [UInt8], to path: String) throws(ContainerError) {
        let temporary = path + ".tmp-\(getpid())"
        try create(bytes, at: temporary, exclusive: false)
        if rename(temporary, path) != 0 {
            let failure = errno
            unlink(temporary)
            throw ContainerError(operation: "rename", path: path, errno: failure)
        }
    }

    /// Creates the file with `bytes`. With `exclusive`, returns false (writing nothing) when it
    /// already exists, so concurrent writers each get their own file.
    @discardableResult
    public static func create(_ bytes: [UInt8], at path: String, exclusive: Bool) throws(ContainerError) -> Bool {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC)
        let fd = open(path, flags, 0o600)
        if fd < 0 {
            if exclusive && errno == EEXIST { return false }
            throw ContainerError(operation: "open", path: path, errno: errno)
        }
        defer { close(fd) }
        if let failure = DescriptorIO.writeAll(fd, bytes) {
            throw ContainerError(operation: "write", path: path, errno: failure)
        }
        return true
    }

    /// The names in a directory of the container (none when it does not exist).
    public static func names(in directory: String) throws(ContainerError) -> [String] {
        guard let dir = opendir(directory) else {
            if errno == ENOENT { return [] }
            throw ContainerError(operation: "opendir", path: directory, errno: errno)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

/// A failed file operation in the container: what, on which path, and the errno.
public struct ContainerError: Error, Equatable, Sendable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var errno: Int32

    public var description: String {
        operation == "HOME"
            ? "HOME is not set: the container is unknown"
            : "\(operation) \(path): \(SystemError.text(errno))"
    }
}
