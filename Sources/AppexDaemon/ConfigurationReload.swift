/// What a running appexd takes from its configuration file when told to read it again
/// (SIGHUP): the keys it can change live apply now; the others stay as they were until the
/// next start, and are named so that the operator knows a restart is due.
public struct ConfigurationReload: Equatable, Sendable {
    /// Keys a running appexd applies: who may host and administer and speak for which app, the
    /// client limits, the app groups (at each extension's next launch) and the log level.
    public static let liveKeys = ["hosts", "admins", "clients", "appGroups", "apps", "logLevel"]
    /// Keys fixed for the life of the process: what it bound, locked, claimed and sized at start.
    public static let restartKeys = [
        "stateDirectory", "socket", "shutdownGrace", "memoryBudget", "budgetHeadroom",
        "metrics", "prebuildSandboxes", "killsByBundle",
    ]

    /// Live keys whose value changed, applied now.
    public var applied: [String]
    /// Keys whose value changed but that only a restart applies; the old value stays in force.
    public var needsRestart: [String]
    /// What is in force after the reload: the new file's live keys over the old start-only ones.
    public var inForce: DaemonConfiguration

    /// From the configuration in force, `old`, to the file as it reads now, `new`. Keys the
    /// command line sets (`overridden`) are neither: the command line's value stays.
    public init(from old: DaemonConfiguration, to new: DaemonConfiguration, overridden: Set<String> = []) {
        var inForce = old
        inForce.hosts = new.hosts
        inForce.admins = new.admins
        inForce.clients = new.clients
        inForce.appGroups = new.appGroups
        inForce.apps = new.apps
        inForce.logLevel = new.logLevel
        inForce.file = new.file
        self.inForce = inForce
        let changed = Self.changedKeys(old, new).filter { !overridden.contains($0) }
        applied = changed.filter(Self.liveKeys.contains)
        needsRestart = changed.filter(Self.restartKeys.contains)
    }

    /// Each key with whether it differs between two configurations.
    static func changedKeys(_ a: DaemonConfiguration, _ b: DaemonConfiguration) -> [String] {
        func differs<T: Equatable>(_ value: KeyPath<DaemonConfiguration, T>) -> Bool { a[keyPath: value] != b[keyPath: value] }
        let keys: [(String, Bool)] = [
            ("hosts", differs(\.hosts)), ("admins", differs(\.admins)), ("clients", differs(\.clients)),
            ("appGroups", differs(\.appGroups)), ("apps", differs(\.apps)), ("logLevel", differs(\.logLevel)),
            ("stateDirectory", differs(\.stateDirectory)), ("socket", differs(\.socketPath)),
            ("shutdownGrace", differs(\.shutdownGrace)), ("memoryBudget", differs(\.memoryBudget)),
            ("budgetHeadroom", differs(\.budgetHeadroom)), ("metrics", differs(\.metrics)),
            ("prebuildSandboxes", differs(\.prebuildSandboxes)), ("killsByBundle", differs(\.killsByBundle)),
        ]
        return keys.filter(\.1).map(\.0)
    }
}
