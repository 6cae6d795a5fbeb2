import AppexPolicy
#if canImport(Glibc)
import Glibc
#endif

/// Reading the configuration file with plain system calls, so that "no such file" is told
/// apart from every other failure by its errno.
enum ConfigurationFile {
    /// A configuration is a few lines; anything this big is the wrong file.
    static let maxSize = 1 << 20

    /// The file's text; nil when it does not exist.
    static func read(_ path: String) throws -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let error = errno
            if error == ENOENT { return nil }
            throw PolicyError(file: path, message: "cannot open: \(String(cString: strerror(error)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = Glibc.read(fd, &chunk, chunk.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw PolicyError(file: path, message: "cannot read: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes += chunk[..<n]
            if bytes.count > maxSize {
                throw PolicyError(file: path, message: "larger than \(maxSize) bytes; not a configuration file")
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw PolicyError(file: path, message: "not UTF-8 text")
        }
        return text
    }
}
