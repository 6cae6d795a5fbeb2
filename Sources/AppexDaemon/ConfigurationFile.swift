import AppexPolicy
import AppexSystem

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
        typealias Sys = SystemCalls<SystemCallError>
        let fd: Int32
        do {
            fd = try Sys.open(path, O_RDONLY)
        } catch let error as SystemCallError {
            if error.errno == .noSuchFileOrDirectory { return nil }
            throw PolicyError(file: path, message: "cannot open: \(reason(error))")
        }
        defer { Sys.close(fd) }
        let bytes: [UInt8]
        do {
            bytes = try Sys.readAll(fd: fd, path: path, limit: maxSize)
        } catch let error as SystemCallError {
            throw PolicyError(file: path, message: "cannot read: \(reason(error))")
        }
        if bytes.count > maxSize {
            throw PolicyError(file: path, message: "larger than \(maxSize) bytes; not a configuration file")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw PolicyError(file: path, message: "not UTF-8 text")
        }
        return text
    }

    /// strerror's sentence for the failure ("Is a directory").
    private static func reason(_ error: SystemCallError) -> String {
        String(cString: strerror(error.errno?.rawValue ?? 0))
    }
}
