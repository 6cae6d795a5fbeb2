import Logging
import Synchronization

/// The level all of appexd's loggers log at, one value that a reload (SIGHUP) changes for
/// every logger already made: swift-log copies a handler into each logger, so a level kept in
/// the handler would stay what it was when the logger was made.
final class ReloadableLogLevel: Sendable {
    private let level: Mutex<Logger.Level>

    init(_ level: Logger.Level) { self.level = Mutex(level) }

    var current: Logger.Level {
        get { level.withLock { $0 } }
        set { level.withLock { $0 = newValue } }
    }

    /// `inner` (text, JSON or journal: LogFormat) with this level in front of it.
    func handler(_ inner: any LogHandler) -> Handler {
        var stream = inner
        // The Logger asks `logLevel` before each message; the inner handler writes what passes.
        stream.logLevel = .trace
        return Handler(stream: stream, level: self)
    }

    struct Handler: LogHandler {
        var stream: any LogHandler
        let level: ReloadableLogLevel

        var logLevel: Logger.Level {
            get { level.current }
            // One level for the process: set through the configuration, not per logger.
            set {}
        }

        var metadata: Logger.Metadata {
            get { stream.metadata }
            set { stream.metadata = newValue }
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { stream[metadataKey: key] }
            set { stream[metadataKey: key] = newValue }
        }

        func log(event: LogEvent) { stream.log(event: event) }
    }
}
