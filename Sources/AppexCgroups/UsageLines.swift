/// Where a cgroup's charge is against a set of lines, and when to look again: the rule of the
/// v2 usage poller (`UsagePoller`), without the kernel, so the tests run it on numbers.
///
/// cgroup v2 has no usage thresholds (v1's `cgroup.event_control`), and `memory.events` moves
/// only at the cgroup's own `memory.high`/`memory.max`. So the charge is read, and how soon
/// depends on how far the next line up is: no allocator is assumed to grow faster than
/// `assumedGrowth`, so the next look comes before it could have reached that line, within
/// `shortest`…`longest` (lmkd polls at 10 ms after a PSI event; systemd-oomd reads its
/// cgroups every second). A crossing, up or down, is reported once: like v1's eventfd.
/// Docs/decisions/0011-v2-threshold-lines.md.
public struct UsageLines: Sendable, Equatable {
    /// Bytes per second no allocator is assumed to outgrow between two looks.
    public static let assumedGrowth: Int64 = 1 << 30
    public static let shortest: Duration = .milliseconds(10)
    public static let longest: Duration = .seconds(1)

    /// The lines, ascending, each once.
    public private(set) var lines: [Int64]
    /// How many lines the last reading was at or above.
    public private(set) var reached = 0
    /// The last reading, nil before the first.
    public private(set) var last: Int64?

    public init(_ lines: [Int64]) {
        self.lines = Self.normalized(lines)
    }

    static func normalized(_ lines: [Int64]) -> [Int64] { Array(Set(lines.filter { $0 > 0 })).sorted() }

    /// How many lines `usage` is at or above.
    func count(at usage: Int64) -> Int { lines.firstIndex { $0 > usage } ?? lines.count }

    /// Takes a reading: true when it lies on the other side of some line than the last one
    /// did (the first reading sets where it is, silently: the caller looks itself at start).
    public mutating func observe(_ usage: Int64) -> Bool {
        let now = count(at: usage)
        defer {
            reached = now
            last = usage
        }
        return last != nil && now != reached
    }

    /// New lines: where the last reading lies is judged against them, silently (the caller
    /// that moved them knows); the next reading reports a crossing of the new ones.
    public mutating func move(to newLines: [Int64]) {
        lines = Self.normalized(newLines)
        reached = last.map(count(at:)) ?? 0
    }

    /// How long until the next look after reading `usage`: the time the assumed growth takes
    /// to reach the next line up, clamped to `shortest`…`longest`; `longest` with no line above.
    public func interval(after usage: Int64) -> Duration {
        guard let next = lines.first(where: { $0 > usage }) else { return Self.longest }
        let nanos = Double(next - usage) / Double(Self.assumedGrowth) * 1e9
        let clamped = min(max(nanos, Double(Self.shortest.wholeNanoseconds)), Double(Self.longest.wholeNanoseconds))
        return .nanoseconds(Int64(clamped))
    }
}
