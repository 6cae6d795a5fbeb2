import AppexPolicy
import AppexWire
import AppexWireListener

/// appexd's configuration file (default `/etc/appex/appexd.yaml`, `appexd --config PATH`):
///
/// ```yaml
/// hosts: [1000, alice]            # uids or user names that may begin requests
/// admins: [0]                     # uids or user names that may install, enable, disable, uninstall
/// stateDirectory: /var/lib/appex  # optional
/// socket: /run/appex/appexd.sock  # optional
/// shutdownGrace: 2s               # optional: Terminate, then kill after this long
/// memoryBudget: 512MiB            # optional: for the jetsam
/// budgetHeadroom: 128MiB          # optional: the kernel's limit this far above the budget
/// metrics: 127.0.0.1:9464         # optional: the Prometheus endpoint, or off
/// killsByBundle: true             # optional: appex_kills_total also by bundle_id
/// prebuildSandboxes: true         # optional: build enabled extensions' sandboxes ahead
/// clients:                        # optional: what each control-socket client may hold
///   helloTimeout: 5s
///   connectionsPerUser: 64        #   of one host uid (administrators apart)
///   connections: 256              #   of all those hosts together
///   requestsPerConnection: 32
///   descriptorsPerConnection: 64
/// appGroups:                      # optional: app groups granted beyond their owning app
///   group.com.example.shared: [com.example.app, com.example.tools.widget]
/// apps:                           # optional: who may act as a containing app's host
///   com.example.app: [alice]      #   (its extensions' transfer events and cancels)
/// logLevel: info                  # optional: trace, debug, info, notice, warning, error, critical
/// ```
///
/// Every key is optional. A mistake (unknown key, wrong type, unknown user name, bad or
/// negative duration) is refused as a `PolicyError` naming file, line, column and key, the
/// same form as policy files. Root (uid 0) may always host and administer.
public struct DaemonConfiguration: Sendable, Equatable {
    public static let defaultPath = "/etc/appex/appexd.yaml"
    public static let defaultStateDirectory = "/var/lib/appex"
    public static let defaultShutdownGrace: Duration = .seconds(2)
    /// swift-log's level names, least severe first (`logLevel`, `appexd --log-level`).
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    /// uids allowed to act as hosts (begin and cancel requests, list extensions), besides root.
    public var hosts: Set<UInt32>
    /// uids allowed to install, enable, disable and uninstall extensions, besides root.
    /// Administering does not imply hosting: list a uid under both for both.
    public var admins: Set<UInt32>
    public var stateDirectory: String
    public var socketPath: String
    /// How long an extension has between Terminate and SIGKILL when appexd stops.
    public var shutdownGrace: Duration
    /// Memory all extensions together may use; nil: no budget of appexd's own.
    public var memoryBudget: ByteSize?
    /// How far above the budget the kernel's own limit sits; nil: the supervisor's default.
    public var budgetHeadroom: ByteSize?
    /// Where `GET /metrics` is served (Docs/metrics.md).
    public var metrics: MetricsEndpoint = .default
    /// `appex_kills_total` also labelled by `bundle_id` (Docs/metrics.md, "Labels").
    public var killsByBundle = false
    /// Whether enabled extensions' sandboxes are built before their first launch
    /// (`SupervisorOptions.prebuildSandboxes`).
    public var prebuildSandboxes = false
    /// What each control-socket client may hold (Docs/security-model.md, "The daemon's boundary").
    public var clients = ClientLimits()
    /// App group → containing-app and bundle identifiers granted it, besides the containing app
    /// that owns it (Docs/security-model.md, "App groups").
    public var appGroups: [String: Set<String>] = [:]
    /// Containing-app identifier → uids that may speak for that app as its host: take its
    /// extensions' background-transfer events and cancel their transfers. A host's Hello names
    /// an app, but only the kernel's uid is believed (Docs/security-model.md, "The daemon's boundary", D10).
    public var apps: [String: Set<UInt32>] = [:]
    /// trace, debug, info, notice, warning, error or critical; nil: appexd's default (info).
    public var logLevel: String?
    /// The file this was read from; nil when no file was read (defaults).
    public var file: String?

    public init(
        hosts: Set<UInt32> = [], admins: Set<UInt32> = [],
        stateDirectory: String = defaultStateDirectory,
        socketPath: String = WireProtocol.defaultControlSocketPath,
        shutdownGrace: Duration = defaultShutdownGrace,
        memoryBudget: ByteSize? = nil, file: String? = nil
    ) {
        self.hosts = hosts
        self.admins = admins
        self.stateDirectory = stateDirectory
        self.socketPath = socketPath
        self.shutdownGrace = shutdownGrace
        self.memoryBudget = memoryBudget
        self.file = file
    }

    /// Whether a control client with this uid (SO_PEERCRED) may begin requests.
    public func mayHost(uid: UInt32) -> Bool { uid == 0 || hosts.contains(uid) }

    /// Whether a control client with this uid may act for the containing app `app`: root, or a
    /// uid listed for it under `apps`. Hosting alone is not enough: any host may name any app.
    public func maySpeak(forApp app: String, uid: UInt32) -> Bool {
        uid == 0 || (mayHost(uid: uid) && apps[app]?.contains(uid) == true)
    }

    /// Whether a control client with this uid may install, enable, disable and uninstall.
    public func mayAdminister(uid: UInt32) -> Bool { uid == 0 || admins.contains(uid) }

    /// Reads the configuration at `path`. A missing file means the defaults (only root may host
    /// or administer) unless it was named `explicit`ly (`--config`), when it is an error: a
    /// typo in a path must not silently lock everyone out.
    ///
    /// - Throws: `PolicyError` with file, line, column and key.
    public static func load(path: String = defaultPath, explicit: Bool) throws -> DaemonConfiguration {
        guard let text = try ConfigurationFile.read(path) else {
            if explicit {
                throw PolicyError(file: path, message: "no such file (a configuration named with --config must exist)")
            }
            return DaemonConfiguration()
        }
        return try parse(text, file: path)
    }

    /// Parses the configuration `text`; `file` names it in errors. An empty document (or one of
    /// comments only) means the defaults.
    public static func parse(_ text: String, file: String) throws -> DaemonConfiguration {
        var configuration = DaemonConfiguration(file: file)
        guard let root = try YAMLNode.parseDocument(text, file: file) else { return configuration }
        let keys: Set<String> = [
            "hosts", "admins", "stateDirectory", "socket", "shutdownGrace", "memoryBudget", "metrics",
            "prebuildSandboxes", "clients", "appGroups", "apps", "budgetHeadroom", "killsByBundle", "logLevel",
        ]
        for (key, node) in try root.mapping(allowed: keys) {
            switch key {
            case "hosts": configuration.hosts = try ConfigurationValues.uids(node)
            case "admins": configuration.admins = try ConfigurationValues.uids(node)
            case "stateDirectory": configuration.stateDirectory = try ConfigurationValues.absolutePath(node)
            case "socket": configuration.socketPath = try ConfigurationValues.socketPath(node)
            case "shutdownGrace": configuration.shutdownGrace = try ConfigurationValues.nonNegativeDuration(node)
            case "memoryBudget": configuration.memoryBudget = try ConfigurationValues.positiveSize(node)
            case "budgetHeadroom": configuration.budgetHeadroom = try node.byteSize()
            case "metrics": configuration.metrics = try ConfigurationValues.metricsEndpoint(node)
            case "prebuildSandboxes": configuration.prebuildSandboxes = try node.bool()
            case "killsByBundle": configuration.killsByBundle = try node.bool()
            case "clients": configuration.clients = try clientLimits(node)
            case "appGroups": configuration.appGroups = try ConfigurationValues.appGroups(node)
            case "apps": configuration.apps = try ConfigurationValues.apps(node)
            case "logLevel": configuration.logLevel = try ConfigurationValues.logLevel(node)
            default: break
            }
        }
        return configuration
    }

    private static func clientLimits(_ node: YAMLNode) throws -> ClientLimits {
        var limits = ClientLimits()
        let keys: Set<String> = [
            "helloTimeout", "connections", "connectionsPerUser", "requestsPerConnection",
            "descriptorsPerConnection",
        ]
        for (key, value) in try node.mapping(allowed: keys) {
            switch key {
            case "helloTimeout":
                limits.helloTimeout = try ConfigurationValues.nonNegativeDuration(value)
                if limits.helloTimeout == .zero { throw value.error("helloTimeout must be longer than 0") }
            case "connections": limits.connections = try value.int(in: 1...1_000_000)
            case "connectionsPerUser": limits.connectionsPerUID = try value.int(in: 1...1_000_000)
            case "requestsPerConnection": limits.requestsPerConnection = try value.int(in: 1...1_000_000)
            case "descriptorsPerConnection": limits.descriptorsPerConnection = try value.int(in: 0...1_000_000)
            default: break
            }
        }
        return limits
    }
}
