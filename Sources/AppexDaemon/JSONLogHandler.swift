import Logging

#if canImport(Glibc)
import Glibc
#endif

/// One JSON object per line: `time` (RFC 3339, UTC, microseconds), `level`, `logger`,
/// `message`, `source`, then the metadata's keys (a key that would overwrite one of those
/// five is written as `metadata.KEY`). Each line goes out in one `write`, so lines of several
/// threads never interleave.
public struct JSONLogHandler: LogHandler {
    public enum Output: Sendable {
        case standardError
        case descriptor(Int32)

        var fd: Int32 {
            switch self {
            case .standardError: return 2
            case .descriptor(let fd): return fd
            }
        }
    }

    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    public let label: String
    let output: Output

    static let reserved: Set<String> = ["time", "level", "logger", "message", "source"]

    public init(label: String, level: Logger.Level, output: Output) {
        self.label = label
        self.logLevel = level
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = Self.line(
            time: LogTime.now(), level: event.level, label: label, message: event.message.description,
            source: event.source, metadata: event.metadata.map { metadata.merging($0) { _, new in new } } ?? metadata)
        line.append(UInt8(ascii: "\n"))
        line.withUnsafeBytes { _ = write(output.fd, $0.baseAddress, $0.count) }
    }

    /// The object, without its newline.
    static func line(
        time: String, level: Logger.Level, label: String, message: String, source: String,
        metadata: Logger.Metadata
    ) -> [UInt8] {
        var out: [UInt8] = Array("{\"time\":".utf8)
        JSONText.string(time, into: &out)
        for (key, value) in [("level", level.rawValue), ("logger", label), ("message", message), ("source", source)] {
            out += Array(",\"\(key)\":".utf8)
            JSONText.string(value, into: &out)
        }
        for key in metadata.keys.sorted() {
            out.append(UInt8(ascii: ","))
            JSONText.string(reserved.contains(key) ? "metadata." + key : key, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONText.value(metadata[key]!, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

/// JSON text for log lines: strings escaped as RFC 8259 requires, metadata values as strings,
/// arrays and objects.
enum JSONText {
    static func string(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(b >> 4)], hex[Int(b & 15)]]
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    static func value(_ v: Logger.Metadata.Value, into out: inout [UInt8]) {
        switch v {
        case .string(let s): string(s, into: &out)
        case .stringConvertible(let c): string(c.description, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                value(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .dictionary(let d):
            out.append(UInt8(ascii: "{"))
            for (i, key) in d.keys.sorted().enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                string(key, into: &out)
                out.append(UInt8(ascii: ":"))
                value(d[key]!, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
