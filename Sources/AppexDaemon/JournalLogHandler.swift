import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Log records sent to the systemd journal in its native protocol (systemd.journal-fields(7),
/// "Native protocol"): one datagram per record on journald's socket, `MESSAGE`, `PRIORITY`,
/// `SYSLOG_IDENTIFIER=appexd`, `CODE_FILE`/`CODE_LINE`/`CODE_FUNC`, `APPEX_LOGGER` and each
/// metadata key as a field of its own (upper-cased, other characters as `_`), so
/// `journalctl BUNDLE_ID=com.example.share` finds an extension's lines. When journald cannot
/// take a record (not running, its socket full), the record goes to standard error as a
/// line, which a systemd service's journal still collects.
public struct JournalLogHandler: LogHandler {
    /// A datagram socket and journald's address, shared by every logger of the process.
    public final class Socket: Sendable {
        let fd: Int32
        let path: String

        public init(path: String) throws {
            guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
                throw JournalError("journal socket path too long: \(path)")
            }
            fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw JournalError("socket(AF_UNIX, SOCK_DGRAM): errno \(errno)") }
            self.path = path
        }

        deinit { close(fd) }

        /// One record; false when journald did not take it.
        func send(_ datagram: [UInt8]) -> Bool {
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { dst in
                for (i, b) in path.utf8.enumerated() { dst[i] = b }
            }
            let sent = datagram.withUnsafeBytes { bytes in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
            return sent == datagram.count
        }
    }

    public struct JournalError: Error, CustomStringConvertible {
        public let description: String
        init(_ d: String) { description = d }
    }

    /// journald's socket; `APPEX_JOURNAL_SOCKET` names another (the tests' own receiver).
    public static var socketPath: String {
        getenv("APPEX_JOURNAL_SOCKET").map { String(cString: $0) } ?? "/run/systemd/journal/socket"
    }

    /// Longer messages are cut here: a datagram must fit journald's socket buffer.
    static let maximumMessageBytes = 48 * 1024

    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    public let label: String
    let socket: Socket

    public init(label: String, level: Logger.Level, socket: Socket) {
        self.label = label
        self.logLevel = level
        self.socket = socket
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let all = event.metadata.map { metadata.merging($0) { _, new in new } } ?? metadata
        let record = Self.datagram(
            level: event.level, label: label, message: event.message.description, metadata: all,
            file: event.file, function: event.function, line: event.line)
        if socket.send(record) { return }
        var text = Array("\(LogTime.now()) \(event.level) \(label): \(event.message)\n".utf8)
        text.withUnsafeMutableBytes { _ = write(2, $0.baseAddress, $0.count) }
    }

    /// syslog priorities (sd-daemon(3)): swift-log has no "alert" or "emergency".
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    /// A journal field name: upper-case letters, digits and `_`, not starting with `_` or a
    /// digit (those are the journal's own), at most 64 characters.
    static func fieldName(_ key: String) -> String {
        var name = String(
            key.uppercased().map { c -> Character in
                (c.isASCII && (c.isLetter || c.isNumber)) ? c : "_"
            }.prefix(64))
        if let first = name.first, first == "_" || first.isNumber { name = "X" + name.dropFirst() }
        return name.isEmpty ? "X" : name
    }

    static func datagram(
        level: Logger.Level, label: String, message: String, metadata: Logger.Metadata,
        file: String, function: String, line: UInt
    ) -> [UInt8] {
        var out: [UInt8] = []
        var text = Array(message.utf8)
        if text.count > maximumMessageBytes { text = Array(text.prefix(maximumMessageBytes)) + Array(" […]".utf8) }
        field("MESSAGE", text, into: &out)
        field("PRIORITY", Array(String(priority(level)).utf8), into: &out)
        field("SYSLOG_IDENTIFIER", Array("appexd".utf8), into: &out)
        field("APPEX_LOGGER", Array(label.utf8), into: &out)
        field("CODE_FILE", Array(file.utf8), into: &out)
        field("CODE_LINE", Array(String(line).utf8), into: &out)
        field("CODE_FUNC", Array(function.utf8), into: &out)
        for key in metadata.keys.sorted() {
            field(fieldName(key), Array(metadata[key]!.description.utf8), into: &out)
        }
        return out
    }

    /// `NAME=value\n`, or for a value with a newline `NAME\n`, its length as 64-bit little
    /// endian, the value, `\n`.
    static func field(_ name: String, _ value: [UInt8], into out: inout [UInt8]) {
        out += Array(name.utf8)
        if value.contains(UInt8(ascii: "\n")) {
            out.append(UInt8(ascii: "\n"))
            withUnsafeBytes(of: UInt64(value.count).littleEndian) { out += $0 }
            out += value
        } else {
            out.append(UInt8(ascii: "="))
            out += value
        }
        out.append(UInt8(ascii: "\n"))
    }
}
