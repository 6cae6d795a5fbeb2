/// Which end of which connection a state machine tracks.
///
/// There are two channels. The extension channel is the socketpair between appexd
/// (`.supervisor`) and one extension (`.extension`). The control channel is the Unix socket
/// between a host or the `appex` CLI (`.host`) and appexd (`.service`).
public enum ConnectionRole: Sendable, CaseIterable {
    case `extension`
    case supervisor
    case host
    case service

    public enum Channel: Sendable { case `extension`, control }

    public var channel: Channel {
        switch self {
        case .extension, .supervisor: .extension
        case .host, .service: .control
        }
    }

    /// True for appexd's ends. The other end speaks first (Hello) and appexd answers.
    public var isAppexd: Bool { self == .supervisor || self == .service }

    /// Whether this end may send `type`; the direction tables of Docs/protocol.md.
    public func maySend(_ type: MessageType) -> Bool {
        switch type {
        case .hello, .refusal, .ping, .pong:
            return true
        case .beginRequest, .memoryWarning, .requestWillExpire, .terminate, .transferScheduled, .transferEvents:
            return self == .supervisor
        case .scheduleTransfer, .cancelSession:
            return self == .extension
        case .hostTransferEvents:
            return self == .service
        case .openURLResult:
            return self == .supervisor || self == .host
        case .completeRequest:
            return self == .extension
        case .cancelRequest:
            return channel == .extension
        case .openURL:
            return self == .extension || self == .service
        case .hostBeginRequest, .hostCancelRequest, .install, .list, .enable, .disable, .uninstall, .jetsam, .status, .cancelTransfers:
            return self == .host
        case .requestOutcome, .interruption, .adminResult:
            return self == .service
        }
    }

    /// The role at the other end of the connection.
    public var peer: ConnectionRole {
        switch self {
        case .extension: .supervisor
        case .supervisor: .extension
        case .host: .service
        case .service: .host
        }
    }

    var name: String {
        switch self {
        case .extension: "extension"
        case .supervisor: "appexd (to an extension)"
        case .host: "host"
        case .service: "appexd (to a host)"
        }
    }
}
