/// A kernel signal of memory pressure: it holds its level from `at` until `until`
/// (monotonic ns).
public struct PressureSignal: Sendable, Equatable {
    /// Where the pressure is: at the budget (the parent cgroup's vmpressure or PSI: the
    /// extensions short of what the budget lets them have), or on the host (the system's PSI,
    /// MemAvailable), which only `watchSystemPressure` listens to.
    public enum Source: String, Sendable { case budget, host }

    public var level: PressureLevel
    public var source: Source
    public var cause: String
    public var at: UInt64
    public var until: UInt64

    public init(level: PressureLevel, source: Source, cause: String, at: UInt64, until: UInt64) {
        self.level = level
        self.source = source
        self.cause = cause
        self.at = at
        self.until = until
    }
}

/// The governor's rule, without the kernel (Docs/jetsam.md, "One kill, then fresh facts"):
/// the level, and whether one more extension must die now. Pure: the supervisor feeds it
/// readings and signals as they come; the tests feed it simulated ones.
///
/// - The level is the strongest of the footprint's (the ladder, with its hysteresis), the
///   held signals' and MemAvailable's. It decides the memory warnings.
/// - A kill is one at a time: none while a victim is dying. Once the victim's memory is
///   returned (`victimGone`), the footprint's level is judged again from the critical line
///   itself, not from the hysteresis band under it: the kill was the answer to that crossing.
/// - A kill needs the footprint at the critical level, or MemAvailable under its floor, or a
///   critical signal that arrived after the last victim's memory was returned. A signal from
///   the budget (vmpressure, the parent's PSI) decides a kill only while the footprint is at
///   or over the warning line; only the host's own pressure kills under it.
public struct PressureGovernor: Sendable {
    public var ladder: PressureLadder
    /// Whether the host's signals count (`watchSystemPressure`): MemAvailable's floor.
    public var systemPressure: Bool
    public private(set) var level: PressureLevel = .normal
    /// The footprint's own level, with the ladder's hysteresis.
    public private(set) var footprintLevel: PressureLevel = .normal
    public private(set) var signals: [PressureSignal] = []
    /// A victim was killed and its memory is not yet returned.
    public private(set) var victimPending = false
    /// When the last victim's memory was returned (monotonic ns); 0 before the first kill.
    public private(set) var settledAt: UInt64 = 0

    public init(ladder: PressureLadder, systemPressure: Bool) {
        self.ladder = ladder
        self.systemPressure = systemPressure
    }

    /// Why one more extension must die.
    public enum KillCause: Sendable, Equatable {
        /// All extensions' footprint is at the critical level.
        case footprint
        /// The host's MemAvailable (bytes) is under the floor.
        case memAvailable(Int64)
        /// A critical signal that came after the last victim's memory was returned.
        case signal(PressureSignal)
    }

    /// A kernel signal arrived.
    public mutating func add(_ signal: PressureSignal) {
        signals.append(signal)
    }

    /// The next moment a held signal runs out (monotonic ns), if any is held.
    public var nextExpiry: UInt64? { signals.map(\.until).min() }

    /// Reads one evaluation's facts: sets the level, and says whether a kill is due.
    public mutating func evaluate(footprint: Int64, available: Int64?, now: UInt64) -> KillCause? {
        signals.removeAll { $0.until <= now }
        let held = signals.map(\.level).max() ?? .normal
        footprintLevel = ladder.next(from: footprintLevel, .init(footprint: footprint, available: nil))
        let hostAvailable = systemPressure ? available : nil
        level = ladder.next(from: footprintLevel, .init(footprint: footprint, available: hostAvailable, signalled: held))
        guard !victimPending else { return nil }
        if footprintLevel == .critical { return .footprint }
        if let hostAvailable, hostAvailable < ladder.availableFloor { return .memAvailable(hostAvailable) }
        let overWarning = ladder.warningLine.map { footprint >= $0 } ?? true
        let fresh = signals.first { s in
            s.level == .critical && s.at > settledAt && (s.source == .host ? systemPressure : overWarning)
        }
        return fresh.map { .signal($0) }
    }

    /// A victim was chosen and killed.
    public mutating func killed() {
        victimPending = true
    }

    /// The victim is gone and its memory returned (its cgroup removed): the next evaluation
    /// judges fresh facts. The footprint re-enters Critical only at the critical line.
    public mutating func victimGone(at now: UInt64) {
        victimPending = false
        settledAt = now
        footprintLevel = min(footprintLevel, .warning)
    }
}
