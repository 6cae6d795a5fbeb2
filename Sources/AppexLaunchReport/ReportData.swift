import AppexBundle
import AppexKillReason
import AppexPolicy
import AppexRegistry
import Foundation

/// How `appex report` groups launches over time.
package enum ReportBucket: String, CaseIterable {
    /// Hours when the history spans at most two days, days otherwise.
    case auto, hour, day
}

/// One extension's history, read from the state database, and the views `appex report`
/// makes of it: launch-time percentiles overall, over time and by version; terminations by
/// reason; request outcomes (the views of Xcode's Organizer).
package struct ExtensionHistory {
    var bundleIdentifier: String
    /// From its policy, when it is still installed and its policy loads.
    var deadlineMicros: UInt64?
    /// Oldest first.
    var launches: [LaunchHistory]
    var requests: [RequestHistory]
    var terminations: [TerminationHistory]

    /// Nothing recorded for it.
    package var isEmpty: Bool { launches.isEmpty && requests.isEmpty && terminations.isEmpty }

    /// Each launch's phases (µs) with `startup` derived, oldest first.
    var phaseSamples: [[String: UInt64]] { launches.map { LaunchPhaseCatalog.withDerived($0.phaseMicroseconds) } }

    var phaseNames: [String] { LaunchPhaseCatalog.ordered(phaseSamples.flatMap(\.keys)) }

    func summary(_ phase: String) -> LatencySummary {
        LatencySummary(phaseSamples.compactMap { $0[phase] })
    }

    /// The launch time the deadline bounds: decision → check-in.
    static let launchTime = "checkIn"

    // MARK: over time

    struct TimeBucket {
        var start: Date
        var summary: LatencySummary
    }

    /// `bucket` resolved against this history's span.
    func resolved(_ bucket: ReportBucket) -> ReportBucket {
        guard bucket == .auto else { return bucket }
        guard let first = launches.first?.time, let last = launches.last?.time else { return .hour }
        // Oldest first (HistoryReader sorts by time), so the span is last − first.
        return last.timeIntervalSince(first) <= 2 * 86_400 ? .hour : .day
    }

    /// Launch time per hour or day (local time), for the buckets that had launches.
    func overTime(_ bucket: ReportBucket, calendar: Calendar = .current) -> [TimeBucket] {
        let unit: Calendar.Component = resolved(bucket) == .day ? .day : .hour
        var groups: [Date: [UInt64]] = [:]
        for launch in launches {
            guard let v = launch.phaseMicroseconds[Self.launchTime],
                let start = calendar.dateInterval(of: unit, for: launch.time)?.start
            else { continue }
            groups[start, default: []].append(v)
        }
        return groups.keys.sorted().map { TimeBucket(start: $0, summary: LatencySummary(groups[$0]!)) }
    }

    // MARK: by version

    struct VersionRow {
        var version: String
        var summary: LatencySummary
        var firstSeen: Date
        var lastSeen: Date
    }

    /// Launch time per bundle version, in the order the versions first launched.
    var byVersion: [VersionRow] {
        var order: [String] = []
        var rows: [String: (values: [UInt64], first: Date, last: Date)] = [:]
        for launch in launches {
            let version = launch.version ?? "unknown"
            guard let v = launch.phaseMicroseconds[Self.launchTime] else { continue }
            if rows[version] == nil {
                order.append(version)
                rows[version] = ([], launch.time, launch.time)
            }
            rows[version]!.values.append(v)
            rows[version]!.last = launch.time
        }
        return order.map {
            VersionRow(
                version: $0, summary: LatencySummary(rows[$0]!.values),
                firstSeen: rows[$0]!.first, lastSeen: rows[$0]!.last)
        }
    }

    // MARK: terminations

    struct ReasonRow {
        var reason: KillReason
        var count: Int
        var last: Date
        /// Band → count, for the ends that recorded one.
        var bands: [Int: Int]
        /// Median footprint at appexd's decision, when recorded.
        var medianFootprintBytes: Int64?
        var lastMessage: String
    }

    /// Most frequent first (then by name).
    var terminationsByReason: [ReasonRow] {
        var rows: [KillReason: ReasonRow] = [:]
        var footprints: [KillReason: [Int64]] = [:]
        for t in terminations {
            var row =
                rows[t.reason]
                ?? ReasonRow(
                    reason: t.reason, count: 0, last: t.time, bands: [:],
                    medianFootprintBytes: nil, lastMessage: t.message)
            row.count += 1
            if t.time >= row.last {
                row.last = t.time
                row.lastMessage = t.message
            }
            if let band = t.band { row.bands[band, default: 0] += 1 }
            if let f = t.footprintBytes { footprints[t.reason, default: []].append(f) }
            rows[t.reason] = row
        }
        for (reason, values) in footprints {
            let sorted = values.sorted()
            rows[reason]?.medianFootprintBytes = sorted[(sorted.count - 1) / 2]
        }
        return rows.values.sorted { $0.count != $1.count ? $0.count > $1.count : $0.reason.rawValue < $1.reason.rawValue }
    }

    // MARK: requests

    var requestOutcomes: [String: Int] {
        requests.reduce(into: [:]) { $0[$1.outcome, default: 0] += 1 }
    }

    /// Request time (received → outcome) of cold or warm requests.
    func requestTotals(cold: Bool) -> LatencySummary {
        // Refused requests never ran: they have no request time.
        LatencySummary(requests.filter { $0.cold == cold && $0.outcome != "refused" }.map { UInt64(max($0.totalMicros, 0)) })
    }
}

/// Reads the history of a state directory: every extension in it, or one.
package enum HistoryReader {
    package static func read(
        _ registry: Registry, extension identifier: String?, limit: Int,
        policies: [String]
    ) throws -> [ExtensionHistory] {
        // Oldest first by time (ids follow time too, unless the clock was set back).
        let launches = try registry.launches(of: identifier, limit: limit).sorted { ($0.time, $0.id ?? 0) < ($1.time, $1.id ?? 0) }
        let requests = try registry.requests(of: identifier, limit: limit).sorted { ($0.time, $0.id ?? 0) < ($1.time, $1.id ?? 0) }
        let terminations = try registry.terminations(of: identifier, limit: limit).sorted {
            ($0.preciseTime, $0.id ?? 0) < ($1.preciseTime, $1.id ?? 0)
        }
        let deadlines = Self.deadlines(registry, policies: policies)

        var ids = Set(launches.map(\.bundleIdentifier))
        ids.formUnion(requests.map(\.bundleIdentifier))
        ids.formUnion(terminations.map(\.bundleIdentifier))
        if let identifier { ids.insert(identifier) }
        return ids.sorted().map { id in
            ExtensionHistory(
                bundleIdentifier: id, deadlineMicros: deadlines[id],
                launches: launches.filter { $0.bundleIdentifier == id },
                requests: requests.filter { $0.bundleIdentifier == id },
                terminations: terminations.filter { $0.bundleIdentifier == id })
        }
    }

    /// The launch deadline of each installed extension under the shipped policies and
    /// `policies` (what appexd uses when started with the same directories).
    static func deadlines(_ registry: Registry, policies: [String]) -> [String: UInt64] {
        guard let set = try? PolicyLocator.load(overlays: policies), let installed = try? registry.list() else { return [:] }
        var out: [String: UInt64] = [:]
        for e in installed {
            guard let bundle = try? ExtensionBundle.load(path: e.bundlePath),
                let policy = EffectivePolicy(bundle: bundle, in: set)
            else { continue }
            out[e.bundleIdentifier] = policy.policy.launchDeadline.wholeMicroseconds
        }
        return out
    }
}
