#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One environment variable, read with getenv(3). Not `ProcessInfo.processInfo.environment`
/// on the paths of `appex run`: that builds a dictionary of the whole environment on every
/// call, and its first call in a process costs ~0.34 ms (Foundation's start-up), ~4 % of a
/// whole `appex run` (Docs/launch-sequence.md, "Start-up").
package enum ProcessEnvironment {
    package static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
