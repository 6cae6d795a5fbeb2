import AppexCommandSupport
import Foundation

/// The first thing `appex report` shows across all the extensions in the history, as
/// Organizer's overview does before its per-app pages: whose launches come nearest their
/// deadline, whose instances are killed most, whose requests fail most, and for which hosts
/// were refused most (disabled, not activated). Each list is the worst few, worst first.
struct ReportFleet {
    struct DeadlineRow {
        var bundleIdentifier: String
        var p99: UInt64
        var deadline: UInt64
        var launches: Int
        /// p99 over the deadline: 1 or more misses it.
        var ratio: Double { deadline > 0 ? Double(p99) / Double(deadline) : 0 }
    }

    struct CountRow {
        var bundleIdentifier: String
        var count: Int
        var of: Int
        /// The most frequent kind (a kill reason, a failure reason).
        var top: String
    }

    var nearestDeadline: [DeadlineRow]
    var mostKilled: [CountRow]
    var mostFailed: [CountRow]
    var mostRefused: [CountRow]

    /// How many rows each list keeps.
    static let rows = 5

    init(_ histories: [ExtensionHistory]) {
        nearestDeadline = Array(
            histories.compactMap { h -> DeadlineRow? in
                let s = LatencySummary(h.launches.compactMap { $0.phaseMicroseconds[ExtensionHistory.launchTime] })
                guard !s.isEmpty, let deadline = h.deadlineMicros else { return nil }
                return DeadlineRow(bundleIdentifier: h.bundleIdentifier, p99: s.p99, deadline: deadline, launches: s.count)
            }.sorted { $0.ratio != $1.ratio ? $0.ratio > $1.ratio : $0.bundleIdentifier < $1.bundleIdentifier }.prefix(Self.rows))
        mostKilled = Self.worst(histories) { h in
            let kills = h.terminations.filter { !$0.reason.isGraceful }.map(\.reason.rawValue)
            return (kills, h.terminations.count)
        }
        mostFailed = Self.worst(histories) { h in
            let failed = h.requests.filter { $0.outcome == "failed" }.map { $0.reason ?? "failed" }
            return (failed, h.requests.count)
        }
        mostRefused = Self.worst(histories) { h in
            let refused = h.requests.filter { $0.outcome == "refused" }.map { $0.reason ?? "refused" }
            return (refused, h.requests.count)
        }
    }

    /// Extensions by how many of their events `pick` keeps (with their most frequent kind),
    /// most first; those with none are left out.
    private static func worst(_ histories: [ExtensionHistory], _ pick: (ExtensionHistory) -> (kinds: [String], of: Int)) -> [CountRow] {
        let rows = histories.compactMap { h -> CountRow? in
            let (kinds, of) = pick(h)
            guard !kinds.isEmpty else { return nil }
            let counts = kinds.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            let top = counts.max { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }!.key
            return CountRow(bundleIdentifier: h.bundleIdentifier, count: kinds.count, of: of, top: top)
        }
        return Array(
            rows.sorted { $0.count != $1.count ? $0.count > $1.count : $0.bundleIdentifier < $1.bundleIdentifier }
                .prefix(Self.rows))
    }

    // MARK: output

    var tables: [(title: String, headers: [String], rows: [[String]], empty: String)] {
        [
            (
                "Nearest their launch deadline (check-in p99)", ["extension", "p99", "deadline", "p99 of deadline", "launches"],
                nearestDeadline.map {
                    [
                        $0.bundleIdentifier, Micros.format($0.p99), Micros.format($0.deadline),
                        Micros.percent(Double($0.p99), of: Double($0.deadline)), String($0.launches),
                    ]
                },
                "no launches of an installed extension"
            ),
            (
                "Most killed", ["extension", "kills", "of ends", "most often"],
                mostKilled.map { [$0.bundleIdentifier, String($0.count), String($0.of), $0.top] }, "no kills"
            ),
            (
                "Most failed requests", ["extension", "failed", "of requests", "most often"],
                mostFailed.map { [$0.bundleIdentifier, String($0.count), String($0.of), $0.top] }, "no failed requests"
            ),
            (
                "Most refused requests", ["extension", "refused", "of requests", "most often"],
                mostRefused.map { [$0.bundleIdentifier, String($0.count), String($0.of), $0.top] }, "no refused requests"
            ),
        ]
    }

    var human: [String] {
        var lines = ["Fleet"]
        for t in tables {
            lines.append("")
            lines.append(t.title)
            lines += t.rows.isEmpty ? ["  " + t.empty] : TextTable.render(headers: t.headers, rows: t.rows)
        }
        return lines
    }

    var json: [String: Any] {
        [
            "nearestDeadline": nearestDeadline.map {
                [
                    "bundleIdentifier": $0.bundleIdentifier, "p99Micros": Int($0.p99), "deadlineMicros": Int($0.deadline),
                    "ratio": $0.ratio, "launches": $0.launches,
                ] as [String: Any]
            },
            "mostKilled": mostKilled.map(Self.json),
            "mostFailed": mostFailed.map(Self.json),
            "mostRefused": mostRefused.map(Self.json),
        ]
    }

    private static func json(_ r: CountRow) -> [String: Any] {
        ["bundleIdentifier": r.bundleIdentifier, "count": r.count, "of": r.of, "mostOften": r.top]
    }

    func html(_ page: inout HTMLPage) {
        page.heading("Fleet", level: 2, id: "fleet")
        for t in tables {
            page.heading(t.title, level: 3)
            if t.rows.isEmpty {
                page.paragraph(t.empty + ".", cssClass: "meta")
            } else {
                page.table(headers: t.headers, rows: t.rows)
            }
        }
    }
}
