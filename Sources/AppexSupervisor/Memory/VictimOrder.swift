/// The order in which extensions die when memory runs short (Docs/jetsam.md).
///
/// First every instance over its soft footprint limit (XNU's high-water processes), then
/// the rest; inside each, lowest band first, and inside a band the one that has been in it
/// longest (XNU and lmkd), or with `.largestFootprint` the biggest first.
public enum VictimOrder: String, Sendable, CaseIterable {
    case longestInBand = "longest-in-band"
    case largestFootprint = "largest-footprint"

    /// One live instance as the victim choice sees it.
    public struct Candidate: Sendable, Equatable {
        public var bundleIdentifier: String
        public var instance: Int
        public var band: Int
        /// Monotonic nanoseconds when it entered its band.
        public var bandSince: UInt64
        public var footprint: Int64
        public var overSoftLimit: Bool

        public init(
            bundleIdentifier: String, instance: Int, band: Int, bandSince: UInt64, footprint: Int64,
            overSoftLimit: Bool
        ) {
            self.bundleIdentifier = bundleIdentifier
            self.instance = instance
            self.band = band
            self.bandSince = bandSince
            self.footprint = footprint
            self.overSoftLimit = overSoftLimit
        }
    }

    /// Whether `a` dies before `b`. Ties go to the older instance.
    public func precedes(_ a: Candidate, _ b: Candidate) -> Bool {
        if a.overSoftLimit != b.overSoftLimit { return a.overSoftLimit }
        if a.band != b.band { return a.band < b.band }
        switch self {
        case .longestInBand:
            if a.bandSince != b.bandSince { return a.bandSince < b.bandSince }
        case .largestFootprint:
            if a.footprint != b.footprint { return a.footprint > b.footprint }
        }
        return a.instance < b.instance
    }

    /// `candidates` sorted first victim first.
    public func sorted(_ candidates: [Candidate]) -> [Candidate] { candidates.sorted(by: precedes) }

    /// Whether the order needs each candidate's footprint (reading it costs a memory.stat).
    public var needsFootprints: Bool { self == .largestFootprint }
}
