#if canImport(Glibc)
import Glibc
#endif

/// The SDK's own lines on stderr (appexd keeps stderr as the extension's log), each prefixed
/// with the bundle identifier so a shared log reads clearly. write(2), not stdio: one call per
/// line keeps lines whole when several threads log, and nothing is lost to buffering at exit.
enum ExtensionLog {
    nonisolated(unsafe) static var prefix = "appex extension"

    static func write(_ line: String) {
        _ = DescriptorIO.writeAll(2, Array("\(prefix): \(line)\n".utf8))
    }

    /// Logs why the extension cannot go on and exits with `status`.
    static func fail(_ line: String, status: Int32 = 1) -> Never {
        write(line)
        exit(status)
    }
}
