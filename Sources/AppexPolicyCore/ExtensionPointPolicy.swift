/// Memory limits of one extension point. Limits apply to the extension's footprint (see
/// Docs/policies.md); `active` while it serves a request, `inactive` while it idles.
public struct MemoryPolicy: Sendable, Hashable {
    public var activeHardLimit: ByteSize
    public var activeSoftLimit: ByteSize
    public var inactiveHardLimit: ByteSize
    public var inactiveSoftLimit: ByteSize
    /// Clean page cache (mapped libraries) the cgroup may hold above the footprint limit: the
    /// kernel charges it to the cgroup but reclaims it first, so a tight limit must leave room.
    public var pageCacheAllowance: ByteSize
    /// Where the numbers come from (Apple's published or reported limits), for people.
    public var source: String

    package init(
        activeHardLimit: ByteSize, activeSoftLimit: ByteSize, inactiveHardLimit: ByteSize, inactiveSoftLimit: ByteSize, pageCacheAllowance: ByteSize,
        source: String
    ) {
        self.activeHardLimit = activeHardLimit
        self.activeSoftLimit = activeSoftLimit
        self.inactiveHardLimit = inactiveHardLimit
        self.inactiveSoftLimit = inactiveSoftLimit
        self.pageCacheAllowance = pageCacheAllowance
        self.source = source
    }
}

/// A denied syscall group and what the filter does with its calls.
public struct SyscallDenial: Sendable, Hashable {
    public var group: String
    public var action: SyscallAction

    package init(group: String, action: SyscallAction) {
        self.group = group
        self.action = action
    }
}

/// Whether the extension shares the host's network.
public enum NetworkAccess: String, Sendable, Hashable {
    /// A private network namespace with loopback only.
    case none
    /// The host network, only when the bundle holds a network entitlement this policy grants.
    case entitled
}

/// One fully resolved extension-point policy: the defaults with the point's file layered on.
public struct ExtensionPointPolicy: Sendable, Hashable {
    /// The identifiers this policy covers; empty for the defaults.
    public var extensionPoints: [String]
    public var title: String
    public var memory: MemoryPolicy
    public var jetsamBand: JetsamBand
    public var idleBand: JetsamBand
    public var launchDeadline: Duration
    public var requestTimeout: Duration
    public var idleTimeout: Duration
    public var maxInstances: Int
    /// How often appexd pings a live instance, and how long it waits for the pong before
    /// killing it as `unresponsive` (a hung extension, as iOS's watchdog would find it).
    public var pingInterval: Duration
    /// How often an idle instance is pinged (never more often than `pingInterval`): an idle
    /// extension that hangs harms no request until it gets one, and a thousand idle ones
    /// pinged every second cost appexd a few percent of a core.
    public var idlePingInterval: Duration
    public var unresponsiveTimeout: Duration
    public var pidsLimit: Int
    public var openFilesLimit: Int
    public var grantableEntitlements: [String]
    public var readOnlyPaths: [String]
    public var network: NetworkAccess
    public var deniedSyscalls: [SyscallDenial]
    /// Files that made this policy, defaults first.
    public var files: [String]
    /// Background transfers (`backgroundTransfers:`; Docs/transfers.md).
    public var transfers = TransferPolicy()

    package init(
        extensionPoints: [String], title: String, memory: MemoryPolicy, jetsamBand: JetsamBand, idleBand: JetsamBand, launchDeadline: Duration,
        requestTimeout: Duration, idleTimeout: Duration, maxInstances: Int, pingInterval: Duration, idlePingInterval: Duration,
        unresponsiveTimeout: Duration, pidsLimit: Int, openFilesLimit: Int, grantableEntitlements: [String], readOnlyPaths: [String],
        network: NetworkAccess, deniedSyscalls: [SyscallDenial], files: [String]
    ) {
        self.extensionPoints = extensionPoints
        self.title = title
        self.memory = memory
        self.jetsamBand = jetsamBand
        self.idleBand = idleBand
        self.launchDeadline = launchDeadline
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.maxInstances = maxInstances
        self.pingInterval = pingInterval
        self.idlePingInterval = idlePingInterval
        self.unresponsiveTimeout = unresponsiveTimeout
        self.pidsLimit = pidsLimit
        self.openFilesLimit = openFilesLimit
        self.grantableEntitlements = grantableEntitlements
        self.readOnlyPaths = readOnlyPaths
        self.network = network
        self.deniedSyscalls = deniedSyscalls
        self.files = files
    }
}
