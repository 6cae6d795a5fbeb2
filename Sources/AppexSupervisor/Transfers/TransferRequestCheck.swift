import AppexTransferPlan
import AppexWire

/// What appexd checks of a ScheduleTransfer before it stores it (Docs/transfers.md): the
/// extension chose every byte of it, so each value is held to what the worker may safely be
/// handed. Returns the problem, or nil.
enum TransferRequestCheck {
    static let maxURLBytes = 8192
    static let maxHeaderBytes = 8192
    /// Headers appexd and the HTTP client own.
    static let reservedHeaders: Set<String> = ["host", "content-length", "transfer-encoding", "range", "if-range", "connection", "te", "upgrade"]

    static func problem(_ schedule: ScheduleTransfer, appGroups: [String]) -> String? {
        if let p = identifierProblem(schedule.sessionIdentifier) { return "session identifier \(p)" }
        let m = schedule.transfer
        guard appGroups.contains(m.appGroup) else {
            return "app group \(m.appGroup) is not one of this extension's (\(appGroups.isEmpty ? "none" : appGroups.joined(separator: ", ")))"
        }
        if let p = TransferPlan.fileNameProblem(m.fileName) { return "file name \(m.fileName) \(p)" }
        if let p = urlProblem(m.url) { return "url \(p)" }
        if let method = m.method {
            guard !method.isEmpty, method.utf8.count <= 32, method.utf8.allSatisfy(isTokenByte) else {
                return "method \(method) is not an HTTP token"
            }
            if m.kind == .download && method != "GET" { return "a download is a GET, not \(method)" }
        }
        for h in m.headers {
            guard let colon = h.firstIndex(of: ":") else { return "header \(h) is not \"Name: value\"" }
            let name = h[..<colon]
            if name.isEmpty || !name.utf8.allSatisfy(isTokenByte) { return "header name \(name) is not an HTTP token" }
            if reservedHeaders.contains(name.lowercased()) { return "header \(name) is set by appexd" }
            if h.utf8.count > maxHeaderBytes || h.utf8.contains(where: { $0 == 10 || $0 == 13 || $0 == 0 }) {
                return "header \(name) holds a line break or is too long"
            }
        }
        return nil
    }

    static func identifierProblem(_ s: String) -> String? {
        if s.isEmpty { return "is empty" }
        if s.utf8.count > 255 { return "is longer than 255 bytes" }
        if s.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) { return "holds a control character" }
        return nil
    }

    /// Only absolute http and https URLs with a host, no whitespace or control bytes.
    static func urlProblem(_ url: String) -> String? {
        if url.utf8.count > maxURLBytes { return "is longer than \(maxURLBytes) bytes" }
        if url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7f }) { return "holds whitespace or a control character" }
        let lower = url.lowercased()
        let rest: Substring
        if lower.hasPrefix("http://") {
            rest = lower.dropFirst(7)
        } else if lower.hasPrefix("https://") {
            rest = lower.dropFirst(8)
        } else {
            return "\(url) is not http:// or https://"
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.isEmpty || authority.hasPrefix(":") || authority.hasPrefix("@") { return "\(url) names no host" }
        return nil
    }

    private static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(b)
        }
    }
}
