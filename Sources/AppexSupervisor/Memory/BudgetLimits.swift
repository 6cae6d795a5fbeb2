/// The kernel's limits around the memory budget (Docs/jetsam.md, "appexd acts before the
/// kernel"). appexd judges the budget on the footprint and kills at its critical line; the
/// kernel's hard limit sits `headroom` above the budget, so that appexd's kill lands first
/// even while an allocator keeps growing during the kill, and the kernel's OOM killer is
/// only the backstop.
public struct BudgetLimits: Sendable, Equatable {
    public var budget: Int64
    public var headroom: Int64

    public init(budget: Int64, headroom: Int64? = nil) {
        self.budget = budget
        self.headroom = headroom ?? Self.defaultHeadroom(budget: budget)
    }

    /// A quarter of the budget, at least 64 MiB: what a 500 MiB/s allocator adds while appexd
    /// kills up to a few victims in a row, with the charge's page cache and kernel memory.
    public static func defaultHeadroom(budget: Int64) -> Int64 { max(64 << 20, budget / 4) }

    /// The parent's hard limit (v1 `memory.limit_in_bytes`, v2 `memory.max`).
    public var hard: Int64 { budget + headroom }
    /// v2 `memory.high`, at the budget, above the critical line: past it the kernel throttles
    /// the allocators, which gives appexd's kill time to land before the hard limit. (The
    /// governor's lines are read on a timer on v2, not taken from `memory.events`.)
    public var high: Int64 { budget }
}
