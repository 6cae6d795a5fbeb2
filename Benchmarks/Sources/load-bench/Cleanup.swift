import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What to undo when the benchmark ends, normally or half-way: the stranger, appexd (its
/// extensions and cgroups go with it), the scratch directory.
final class Cleanup: @unchecked Sendable {
    var daemon: Daemon?
    var stranger: Stranger?
    var scratch: String?

    func run() {
        stranger?.end()
        stranger = nil
        daemon?.stop()
        daemon = nil
        if let scratch { try? FileManager.default.removeItem(atPath: scratch) }
        scratch = nil
    }
}

let cleanup = Cleanup()

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("load-bench: \(message)\n".utf8))
    cleanup.run()
    exit(1)
}
