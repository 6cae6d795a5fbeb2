import AppexCommandSupport
import AppexHostClient
import AppexRun
import AppexWire
import Foundation

/// How `appex request` shows what came back: one JSON object (`--json`: outcome, items,
/// error, reason, cold, phases in µs, peakMemoryBytes), or a few lines for people. A request
/// appexd refused before any extension saw it has the outcome "refused".
struct RequestOutput {
    var outcome: String
    var items: [AppexWire.ExtensionItem] = []
    var error: String?
    /// `error` as people read it: appexd's own errors (its domain and code mean nothing to
    /// them) by their message alone; an extension's with its domain and code.
    var errorForPeople: String?
    var reason: String?
    var cold = false
    var phases: [(String, UInt64)] = []
    var peakMemoryBytes: UInt64?
    var details: [String] = []

    init(_ o: RequestOutcome) {
        switch o.outcome {
        case .completed: outcome = "completed"
        case .cancelled: outcome = "cancelled"
        case .failed: outcome = "failed"
        }
        items = o.items
        error = o.error.map { e in "\(e.domain) \(e.code)" + (e.message.map { ": \($0)" } ?? "") }
        errorForPeople = o.error.map { e in
            e.domain == Self.appexdErrorDomain
                ? e.message ?? "appexd ended the request" : "\(e.domain) \(e.code)" + (e.message.map { ": \($0)" } ?? "")
        }
        reason = o.reason?.rawValue
        cold = o.cold
        phases = o.phases.map { ($0.name, $0.microseconds) }
        peakMemoryBytes = o.peakMemoryBytes
    }

    /// A request appexd refused before any extension saw it.
    init(refusal: Refusal) {
        outcome = "refused"
        error = refusal.message ?? refusal.reason.rawValue
        reason = refusal.reason.rawValue
        details = refusal.details
    }

    /// The domain of the errors appexd itself ends requests with (RequestTicket.errorDomain).
    static let appexdErrorDomain = "dev.appex.appexd"

    var succeeded: Bool { outcome == "completed" }

    /// The command's exit status (ExitStatus): 0 completed; a refusal by its reason (66 no
    /// such extension, 77 not permitted, 75 busy); 1 otherwise.
    var exitStatus: ExitStatus {
        if succeeded { return .success }
        guard outcome == "refused", let reason else { return .no }
        return HostClientError(.refused, reason: Reason(reason), message: "").exitStatus
    }

    var json: [String: Any] {
        var phaseObject: [String: Any] = [:]
        for (name, us) in phases { phaseObject[name] = Int(us) }
        return [
            "outcome": outcome,
            "items": items.map(Self.itemJSON),
            "error": error.jsonOrNull,
            "reason": reason.jsonOrNull,
            "cold": cold,
            "phases": phaseObject,
            "peakMemoryBytes": peakMemoryBytes.map { Int($0) as Any } ?? NSNull(),
            "details": details,
        ]
    }

    static func itemJSON(_ item: AppexWire.ExtensionItem) -> [String: Any] {
        var o: [String: Any] = [:]
        if let t = item.attributedTitle { o["title"] = t }
        if let t = item.attributedContentText { o["contentText"] = t }
        if !item.attachments.isEmpty {
            o["attachments"] = item.attachments.map { a -> [String: Any] in
                var j: [String: Any] = ["typeIdentifiers": a.typeIdentifiers]
                switch a.content {
                case .inline(let bytes): j["text"] = String(decoding: bytes, as: UTF8.self)
                case .descriptor(let index): j["descriptor"] = index
                }
                return j
            }
        }
        if !item.userInfo.isEmpty { o["userInfo"] = item.userInfo.mapValues(Self.userInfoJSON) }
        return o
    }

    static func userInfoJSON(_ v: UserInfoValue) -> Any {
        switch v {
        case .string(let s): s
        case .integer(let i): i
        case .bool(let b): b
        case .double(let d): d
        case .data(let d): d.map { String(format: "%02x", $0) }.joined()
        }
    }

    var human: String {
        var lines: [String] = []
        if outcome == "refused" {
            // Nothing was launched: no cold or warm, no phases.
            lines.append("refused: \(error ?? "")" + (reason.map { error?.contains($0) == true ? "" : " (\($0))" } ?? ""))
            lines += details.map { "  \($0)" }
            return lines.joined(separator: "\n")
        }
        var head = outcome + (cold ? " (cold launch)" : " (warm)")
        if let reason { head += ": \(reason)" }
        lines.append(head)
        if let error = errorForPeople ?? error { lines.append("  error: \(error)") }
        for d in details { lines.append("  \(d)") }
        for item in items {
            if let t = item.attributedTitle { lines.append("  title: \(t)") }
            if let t = item.attributedContentText { lines.append("  text: \(t)") }
            for a in item.attachments { lines.append("  attachment: \(a.typeIdentifiers.joined(separator: ", "))") }
            for (key, value) in item.userInfo.sorted(by: { $0.key < $1.key }) { lines.append("  \(key): \(Self.userInfoJSON(value))") }
        }
        if !phases.isEmpty {
            let shown = phases.map { "\($0.0) \(Self.format($0.1))" }.joined(separator: ", ")
            lines.append("  phases: \(shown)")
        }
        if let peak = peakMemoryBytes {
            lines.append(String(format: "  peak memory: %.1f MiB", Double(peak) / 1_048_576))
        }
        return lines.joined(separator: "\n")
    }

    static func format(_ us: UInt64) -> String {
        us >= 10_000 ? String(format: "%.1f ms", Double(us) / 1000) : "\(us) µs"
    }
}
