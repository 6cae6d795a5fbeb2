/// What `appex-transfer` tells appexd, one line each on descriptor 4:
///
/// ```
/// progress <bytes>                 bytes moved so far (the file's size, for a download)
/// resumable <etag>                 the server offers ranges under this validator
/// done <outcome> <bytes> <status> <reason> <message…>
/// ```
/// `outcome` is `completed` or `failed`; `status` the server's last HTTP status or 0; `reason`
/// a Reason token or `-`.
public enum WorkerReport: Sendable, Equatable {
    case progress(bytes: Int64)
    case resumable(etag: String)
    case done(completed: Bool, bytes: Int64, httpStatus: Int, reason: String?, message: String)

    public var line: String {
        switch self {
        case .progress(let b): return "progress \(b)\n"
        case .resumable(let e): return "resumable \(Self.oneLine(e))\n"
        case .done(let ok, let b, let s, let r, let m):
            return "done \(ok ? "completed" : "failed") \(b) \(s) \(r ?? "-") \(Self.oneLine(m))\n"
        }
    }

    static func oneLine(_ s: String) -> String {
        String(s.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }

    /// One line (without its newline), or nil when it is not a report.
    public init?(line: Substring) {
        let parts = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: false)
        switch parts.first {
        case "progress":
            guard parts.count == 2, let b = Int64(parts[1]) else { return nil }
            self = .progress(bytes: b)
        case "resumable":
            guard parts.count >= 2 else { return nil }
            self = .resumable(etag: String(line.dropFirst("resumable ".count)))
        case "done":
            guard parts.count >= 5, let b = Int64(parts[2]), let s = Int(parts[3]) else { return nil }
            self = .done(
                completed: parts[1] == "completed", bytes: b, httpStatus: s,
                reason: parts[4] == "-" ? nil : String(parts[4]), message: parts.count > 5 ? String(parts[5]) : "")
        default:
            return nil
        }
    }
}
