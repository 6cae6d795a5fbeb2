import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

extension ContainerStore {
    /// The extension's log (created 0640), written only by Appex: see `ExtensionLogFile`.
    public func openLog(for bundleIdentifier: String, limit: Int = ExtensionLogFile.defaultLimit) throws -> ExtensionLogFile {
        try Self.validate(identifier: bundleIdentifier)
        let root = try openStateRoot()
        defer { Sys.close(root) }
        let logs = try Self.directory(beneath: root, "logs", mode: 0o700, owner: (0, 0))
        return try ExtensionLogFile(logsFD: logs, bundleIdentifier: bundleIdentifier, limit: limit)
    }
}
