import Logging

/// How appexd writes its log (`appexd --log-format`): lines for people on standard error, one
/// JSON object per line for log shippers, or the systemd journal's native protocol, where each
/// metadata key becomes a journal field (`journalctl -u appexd BUNDLE_ID=…`).
public enum LogFormat: String, CaseIterable, Sendable {
    case text, json, journal

    /// A handler per logger label, writing every level: appexd puts its one reloadable level
    /// in front (ReloadableLogLevel).
    public func makeHandler() throws -> @Sendable (String) -> any LogHandler {
        switch self {
        case .text:
            return { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = .trace
                return handler
            }
        case .json:
            let output = JSONLogHandler.Output.standardError
            return { label in JSONLogHandler(label: label, level: .trace, output: output) }
        case .journal:
            let socket = try JournalLogHandler.Socket(path: JournalLogHandler.socketPath)
            return { label in JournalLogHandler(label: label, level: .trace, socket: socket) }
        }
    }
}
