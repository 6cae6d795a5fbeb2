/// How short memory is for Appex as a whole (Docs/jetsam.md): the counterpart of XNU's
/// memorystatus levels and of iOS's memory-pressure notifications.
public enum PressureLevel: Int, Sendable, Comparable, CustomStringConvertible, CaseIterable {
    /// Nothing to do.
    case normal = 0
    /// Memory warnings go out, lowest bands first.
    case warning = 1
    /// Extensions are killed in victim order, one at a time, until the level falls.
    case critical = 2

    public static func < (a: PressureLevel, b: PressureLevel) -> Bool { a.rawValue < b.rawValue }
    public var description: String {
        switch self {
        case .normal: "normal"
        case .warning: "warning"
        case .critical: "critical"
        }
    }

    public init?(name: String) {
        guard let l = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = l
    }
}

/// The rule that turns what Appex reads into a level, with hysteresis: a level is entered at
/// its line and left only once the footprint has fallen well below it, so a total hovering at
/// a line does not flap between levels (each flap would mean a round of warnings or a kill).
///
/// Pure: the supervisor feeds it readings whenever an event arrives; tests feed it numbers.
public struct PressureLadder: Sendable, Equatable {
    /// All extensions together may use this much footprint (bytes); nil: no budget, and only
    /// the system's signals (PSI, vmpressure, MemAvailable) raise the level.
    public var budget: Int64?
    /// Fractions of the budget: enter Warning / Critical at these, leave them below the
    /// `exit` fractions.
    public var warningEnter = 0.80, warningExit = 0.70
    public var criticalEnter = 0.90, criticalExit = 0.85
    /// The system's available memory (MemAvailable) below which the level is Critical
    /// whatever the budget says, and below twice which it is at least Warning.
    public var availableFloor: Int64

    public init(budget: Int64?, availableFloor: Int64) {
        self.budget = budget
        self.availableFloor = availableFloor
    }

    /// What one evaluation reads.
    public struct Reading: Sendable, Equatable {
        /// The footprint of all extensions together (the parent cgroup's).
        public var footprint: Int64
        /// MemAvailable from /proc/meminfo; nil when unreadable.
        public var available: Int64?
        /// The strongest level a kernel signal still holds (PSI trigger, vmpressure event),
        /// or .normal once its hold has run out.
        public var signalled: PressureLevel

        public init(footprint: Int64, available: Int64?, signalled: PressureLevel = .normal) {
            self.footprint = footprint
            self.available = available
            self.signalled = signalled
        }
    }

    /// The level after `reading`, coming from `current`.
    public func next(from current: PressureLevel, _ reading: Reading) -> PressureLevel {
        var level = reading.signalled
        if let available = reading.available {
            if available < availableFloor { level = .critical } else if available < availableFloor * 2 { level = max(level, .warning) }
        }
        if let budget, budget > 0 {
            let f = Double(reading.footprint) / Double(budget)
            let critical = f >= criticalEnter || (current == .critical && f >= criticalExit)
            let warning = f >= warningEnter || (current >= .warning && f >= warningExit)
            level = max(level, critical ? .critical : warning ? .warning : .normal)
        }
        return level
    }

    /// Where Warning begins (bytes): under it, only the host's own pressure kills.
    public var warningLine: Int64? {
        guard let budget, budget > 0 else { return nil }
        return Int64(Double(budget) * warningEnter)
    }

    /// The charge lines (bytes) at which the kernel should wake Appex: crossing one, up or
    /// down, may change the level. The charge is never below the footprint, so it reaching
    /// a line is the first sign the footprint may have.
    public var lines: [Int64] {
        guard let budget, budget > 0 else { return [] }
        return [warningExit, warningEnter, criticalExit, criticalEnter].map { Int64(Double(budget) * $0) }
    }
}
