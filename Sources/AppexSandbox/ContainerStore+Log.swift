import AppexStateDirectory
#if canImport(Glibc)
import Glibc
#endif

extension ContainerStore {
    /// The extension's log (created 0640), written only by Appex: see `ExtensionLog`.
    public func openLog(for bundleIdentifier: String, limit: Int = ExtensionLog.defaultLimit) throws -> ExtensionLog {
        try Self.validate(identifier: bundleIdentifier)
        let root = try openStateRoot()
        defer { Sys.close(root) }
        let logs = try Self.directory(beneath: root, "logs", mode: 0o700, owner: (0, 0))
        return try ExtensionLog(logsFD: logs, bundleIdentifier: bundleIdentifier, limit: limit)
    }
}
