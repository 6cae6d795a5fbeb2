// The jetsam list over the control socket (`appex jetsam`): the Jetsam admin command is
// answered by an AdminResult carrying one JetsamReport.

/// appexd's memory governor as it stands: the pressure level and every live instance, in
/// victim order (the first one listed dies first).
public struct JetsamReport: Equatable, Sendable {
    /// normal, warning or critical.
    public var level: String
    public var budgetBytes: UInt64?
    /// The footprint of all extensions together, when the governor last looked.
    public var footprintBytes: UInt64
    /// The system's MemAvailable then.
    public var availableBytes: UInt64?
    public var entries: [JetsamEntry]

    public init(level: String, budgetBytes: UInt64?, footprintBytes: UInt64, availableBytes: UInt64?, entries: [JetsamEntry]) {
        self.level = level
        self.budgetBytes = budgetBytes
        self.footprintBytes = footprintBytes
        self.availableBytes = availableBytes
        self.entries = entries
    }
}

/// One live extension instance in the jetsam list.
public struct JetsamEntry: Equatable, Sendable {
    public var bundleIdentifier: String
    public var instance: UInt64
    public var pid: Int32
    /// XNU's JETSAM_PRIORITY_* (×10 in Appex): idle 0 … critical 190.
    public var band: UInt32
    public var state: String
    public var footprintBytes: UInt64
    public var activeSoftLimitBytes: UInt64
    public var activeHardLimitBytes: UInt64
    public var inactiveSoftLimitBytes: UInt64
    public var inactiveHardLimitBytes: UInt64
    /// Whether the active limits apply now (it works for a request).
    public var active: Bool
    public var overSoftLimit: Bool
    public var timeInBandMicros: UInt64
    /// User plus system CPU time of the instance's process so far (`appex top` shows the
    /// rate between two reports). Absent from an older appexd, or when /proc could not say.
    public var cpuMicros: UInt64?
    /// How long its launch took: the decision to launch until its Hello.
    public var lastLaunchMicros: UInt64?

    public init(
        bundleIdentifier: String, instance: UInt64, pid: Int32, band: UInt32, state: String, footprintBytes: UInt64,
        activeSoftLimitBytes: UInt64, activeHardLimitBytes: UInt64, inactiveSoftLimitBytes: UInt64,
        inactiveHardLimitBytes: UInt64, active: Bool, overSoftLimit: Bool, timeInBandMicros: UInt64,
        cpuMicros: UInt64? = nil, lastLaunchMicros: UInt64? = nil
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.instance = instance
        self.pid = pid
        self.band = band
        self.state = state
        self.footprintBytes = footprintBytes
        self.activeSoftLimitBytes = activeSoftLimitBytes
        self.activeHardLimitBytes = activeHardLimitBytes
        self.inactiveSoftLimitBytes = inactiveSoftLimitBytes
        self.inactiveHardLimitBytes = inactiveHardLimitBytes
        self.active = active
        self.overSoftLimit = overSoftLimit
        self.timeInBandMicros = timeInBandMicros
        self.cpuMicros = cpuMicros
        self.lastLaunchMicros = lastLaunchMicros
    }
}
