// Administration over the control socket: install, list, enable, disable, uninstall. Each is
// answered by one AdminResult or one Refusal with the same request id.

/// host -> appexd: one administrative operation. Each command is its own message type on the
/// wire (Install, List, Enable, Disable, Uninstall).
public struct AdminRequest: Equatable, Sendable {
    public enum Command: Equatable, Sendable {
        /// Install a containing app or a bare `.appex` from this path (as appexd sees it).
        case install(path: String)
        case list
        case enable(bundleIdentifier: String)
        case disable(bundleIdentifier: String)
        /// The extension's data container is removed only when `removeData` is true.
        case uninstall(bundleIdentifier: String, removeData: Bool)
        /// The memory governor's list (answered with `AdminResult.jetsam`).
        case jetsam
        /// Where appexd keeps its records (answered with `AdminResult.stateDirectory`), so
        /// that `appex kills`, `report` and `logs` read the appexd they talk to.
        case status
        /// Cancel background transfers: a transfer id in decimal, a bundle identifier, or
        /// `bundle/session` (Docs/transfers.md).
        case cancelTransfers(selector: String)
    }

    public var requestID: UInt64
    public var command: Command

    public init(requestID: UInt64, command: Command) {
        self.requestID = requestID
        self.command = command
    }

    var messageType: MessageType {
        switch command {
        case .install: .install
        case .list: .list
        case .enable: .enable
        case .disable: .disable
        case .uninstall: .uninstall
        case .jetsam: .jetsam
        case .status: .status
        case .cancelTransfers: .cancelTransfers
        }
    }
}

/// appexd -> host: the operation succeeded; the extensions it concerns (installed, listed,
/// enabled, disabled or removed) as they now are.
public struct AdminResult: Equatable, Sendable {
    public var requestID: UInt64
    public var extensions: [ExtensionInfo]
    /// The answer to Jetsam.
    public var jetsam: JetsamReport?
    /// The answer to Status: appexd's state directory (absolute).
    public var stateDirectory: String?

    public init(requestID: UInt64, extensions: [ExtensionInfo], jetsam: JetsamReport? = nil, stateDirectory: String? = nil) {
        self.requestID = requestID
        self.extensions = extensions
        self.jetsam = jetsam
        self.stateDirectory = stateDirectory
    }
}

/// What the registry knows about one installed extension.
public struct ExtensionInfo: Equatable, Sendable {
    public var bundleIdentifier: String
    public var extensionPoint: String
    public var enabled: Bool
    public var displayName: String?
    public var version: String?
    /// The containing app's bundle identifier, when installed from one.
    public var containingApp: String?

    public init(
        bundleIdentifier: String, extensionPoint: String, enabled: Bool,
        displayName: String? = nil, version: String? = nil, containingApp: String? = nil
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.extensionPoint = extensionPoint
        self.enabled = enabled
        self.displayName = displayName
        self.version = version
        self.containingApp = containingApp
    }
}
