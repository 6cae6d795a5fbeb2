/// What `appex profile` measured: the phases of each counted launch (µs, with `startup`
/// derived), and what went wrong with the others.
package struct ProfileSamples {
    package var bundleIdentifier: String
    package var version: String?
    package var warm: Bool
    /// Launches (cold) or requests (warm) asked for.
    package var requested: Int
    package var launchDeadline: Duration
    /// One entry per counted launch (cold) or warm request: phase → µs.
    package var samples: [[String: UInt64]] = []
    /// Reason (or outcome) → how many launches or requests did not count.
    package var failures: [String: Int] = [:]
    /// The first message seen for each failure reason.
    package var failureMessages: [String: String] = [:]
    /// Requests that completed, were cancelled by the extension, or failed.
    package var outcomes: [String: Int] = [:]

    package init(bundleIdentifier: String, version: String?, warm: Bool, requested: Int, launchDeadline: Duration) {
        self.bundleIdentifier = bundleIdentifier
        self.version = version
        self.warm = warm
        self.requested = requested
        self.launchDeadline = launchDeadline
    }

    package var deadlineMicros: UInt64 { launchDeadline.wholeMicroseconds }

    /// The summary of one phase over the counted samples that have it.
    func summary(_ phase: String) -> LatencySummary { LatencySummary(samples.compactMap { $0[phase] }) }

    package var phaseNames: [String] { LaunchPhaseCatalog.ordered(samples.flatMap(\.keys)) }
}
