#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One environment variable, read with getenv(3). Not `ProcessInfo.processInfo.environment`
/// on the paths of `appex run`: that builds a dictionary of the whole environment on every
/// call, and its first call in a process starts Foundation
/// (Docs/decisions/0003-static-executable-run-without-reflection.md).
package enum ProcessEnvironment {
    package static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
