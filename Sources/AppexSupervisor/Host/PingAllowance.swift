import AppexCgroups

/// How often a host may ping appexd: a burst, then a steady rate. Hosts have no need to ping
/// (appexd pings them); one that pings as fast as it reads the pongs costs appexd's loop a
/// good part of a core, so past this the connection is closed. Loop thread only.
struct PingAllowance {
    static let burst = 32.0
    static let perSecond = 16.0

    private var tokens = burst
    private var refilledAt: UInt64

    init(now: UInt64 = MonotonicTime.now) { refilledAt = now }

    /// Whether one more ping at `now` (monotonic ns) is within the allowance.
    mutating func take(now: UInt64 = MonotonicTime.now) -> Bool {
        let elapsed = Double(now &- refilledAt) / 1e9
        refilledAt = now
        tokens = min(Self.burst, tokens + elapsed * Self.perSecond)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
