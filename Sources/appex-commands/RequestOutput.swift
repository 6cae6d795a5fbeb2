import AppexWire
import Foundation

/// How `appex request` shows what came back: one JSON object (`--json`: outcome, items,
/// error, reason, cold, phases in µs, peakMemoryBytes), or a few lines for people.
struct RequestOutput {
    var outcome: String
    var items: [AppexWire.ExtensionItem] = []
    var error: String?
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
        reason = o.reason?.rawValue
        cold = o.cold
        phases = o.phases.map { ($0.name, $0.microseconds) }
        peakMemoryBytes = o.peakMemoryBytes
    }

    /// A request appexd refused before any extension saw it.
    init(refusal: Refusal) {
        outcome = "failed"
        error = refusal.message ?? refusal.reason.rawValue
        reason = refusal.reason.rawValue
        details = refusal.details
    }

    var succeeded: Bool { outcome == "completed" }

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
        var head = outcome + (cold ? " (cold launch)" : " (warm)")
        if let reason { head += ": \(reason)" }
        lines.append(head)
        if let error { lines.append("  error: \(error)") }
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
