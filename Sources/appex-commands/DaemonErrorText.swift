import AppexHostClient
import AppexRun
import AppexWire

#if canImport(Glibc)
import Glibc
#endif

/// What the CLI says when appexd could not be reached or said no, and the exit status it
/// means: a refusal reads as a refusal (its reason in words, then appexd's message), a dead
/// socket says how to start appexd or point at another, naming the path once.
extension HostClientError {
    var exitStatus: ExitStatus {
        switch kind {
        case .socket:
            return socketError?.errno == EACCES ? .noPermission : .unavailable
        case .connectionRefused, .refused:
            guard let reason else { return .no }
            switch reason {
            case .notAuthorized: return .noPermission
            case .unknownExtension: return .noInput
            case .invalidBundle: return .dataError
            case .busy, .shutdown, .supervisorShutdown: return .temporaryFailure
            case .versionMismatch, .protocolError: return .software
            default: return .no
            }
        case .connectionLost, .protocolError: return .software
        case .invalidRequest: return .usage
        }
    }

    /// Lines for stderr, each starting with `command:` (e.g. "appex enable").
    func lines(command: String, socketPath: String?) -> [String] {
        switch kind {
        case .socket:
            let path = HostClient.socketPath(explicit: socketPath)
            let why = socketError.map { String(cString: strerror($0.errno)) } ?? message
            let hint =
                socketError?.errno == EACCES
                ? "only root and appexd's configured admins and hosts may use it"
                : "start appexd (systemctl start appexd), or set APPEX_SOCKET or --socket to the socket of a running appexd"
            return ["\(command): cannot connect to appexd at \(path) (\(why)): \(hint)"]
        case .connectionRefused, .refused:
            return ["\(command): refused: \(refusalText)"] + details.map { "  \($0)" }
        default:
            return ["\(command): \(message)"] + details.map { "  \($0)" }
        }
    }

    /// The refusal in words: appexd's message without the client's prefix, and its reason
    /// token when the message does not already say it.
    var refusalText: String {
        var text = message
        for prefix in ["appexd refused the request: ", "appexd refused the connection: "] where text.hasPrefix(prefix) {
            text.removeFirst(prefix.count)
        }
        guard let reason else { return text }
        return text.contains(reason.rawValue) ? text : "\(text) (\(reason.rawValue))"
    }
}
