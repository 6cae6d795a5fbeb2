/// Where appexd serves its metrics (Docs/metrics.md): `HOST:PORT` (`127.0.0.1:9464`,
/// `[::1]:9464`, `localhost:9464`; port 0 picks a free one), or `off`. Loopback by default:
/// the endpoint has no authentication, so reaching it from elsewhere is a choice made in the
/// configuration, never the default.
public enum MetricsEndpoint: Sendable, Equatable, CustomStringConvertible {
    case off
    case listen(host: String, port: Int)

    public static let defaultPort = 9464
    public static let `default` = MetricsEndpoint.listen(host: "127.0.0.1", port: defaultPort)

    /// nil when `text` is neither `off` nor a host and port.
    public init?(parsing text: String) {
        if text == "off" {
            self = .off
            return
        }
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        guard !portText.isEmpty, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber),
            portText.count <= 5, let port = Int(portText), port <= 65535
        else { return nil }
        if host.hasPrefix("[") {
            // An IPv6 literal: hex digits, colons and the dots of an embedded IPv4 address.
            guard host.hasSuffix("]"), host.count > 2 else { return nil }
            host = String(host.dropFirst().dropLast())
            guard host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            // An IPv4 literal or a host name.
            guard !host.isEmpty, host.count <= 253,
                host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") })
            else { return nil }
        }
        self = .listen(host: host, port: port)
    }

    /// As it is written in the configuration.
    public var description: String {
        switch self {
        case .off: return "off"
        case .listen(let host, let port): return (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        }
    }

    static let expected = "expected HOST:PORT (127.0.0.1:9464, [::1]:9464) or off"
}
