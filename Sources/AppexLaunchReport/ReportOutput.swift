import AppexCommandSupport
import Foundation

/// What `appex report` shows for each extension in the history: launch phases, launch time
/// over time and by version against the deadline, terminations by reason, and requests; in
/// the terminal, as JSON, or as a page with plots.
package struct ReportOutput {
    let stateDirectory: String
    let histories: [ExtensionHistory]
    let bucket: ReportBucket

    package init(stateDirectory: String, histories: [ExtensionHistory], bucket: ReportBucket) {
        self.stateDirectory = stateDirectory
        self.histories = histories
        self.bucket = bucket
    }

    // MARK: terminal

    package var human: String {
        var lines: [String] = []
        if histories.allSatisfy({ $0.launches.isEmpty && $0.requests.isEmpty && $0.terminations.isEmpty }) {
            return "No history in \(stateDirectory)."
        }
        lines += ReportFleet(histories).human
        for h in histories {
            lines.append("")
            lines += section(h)
        }
        return lines.joined(separator: "\n")
    }

    private func section(_ h: ExtensionHistory) -> [String] {
        var lines = [headline(h)]
        if !h.launches.isEmpty {
            lines.append("")
            lines.append("Launch phases")
            lines += TextTable.render(
                headers: ["phase", "p50", "p90", "p99", "max", "n"],
                rows: h.phaseNames.map { name in
                    let s = h.summary(name)
                    return [name] + [s.p50, s.p90, s.p99, s.max].map(Micros.format) + [String(s.count)]
                })
            let resolved = h.resolved(bucket)
            lines.append("")
            lines.append("Launch time (decision → check-in) by \(resolved.rawValue)" + deadlineNote(h))
            lines += TextTable.render(
                headers: ["from", "n", "p50", "p90", "p99", "max"],
                rows: h.overTime(bucket).map { b in
                    [Self.bucketLabel(b.start, resolved)] + percentileCells(b.summary)
                })
            lines.append("")
            lines.append("Launch time by version" + deadlineNote(h))
            lines += TextTable.render(
                headers: ["version", "n", "p50", "p90", "p99", "max", "last launch"],
                rows: h.byVersion.map { v in
                    [v.version] + percentileCells(v.summary) + [Self.bucketLabel(v.lastSeen, nil)]
                })
        }
        if !h.terminations.isEmpty {
            lines.append("")
            lines.append("Terminations by reason")
            lines += TextTable.render(
                headers: ["reason", "count", "share", "bands", "footprint p50", "last"],
                rows: h.terminationsByReason.map { r in
                    [
                        r.reason.rawValue, String(r.count), Micros.percent(Double(r.count), of: Double(h.terminations.count)),
                        Self.bands(r.bands), r.medianFootprintBytes.map(Self.bytes) ?? "–", Self.bucketLabel(r.last, nil),
                    ]
                })
        }
        if !h.requests.isEmpty {
            lines.append("")
            let outcomes = h.requestOutcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            lines.append("Requests: \(h.requests.count) (\(outcomes))")
            var rows: [[String]] = []
            for (label, cold) in [("cold", true), ("warm", false)] {
                let s = h.requestTotals(cold: cold)
                if !s.isEmpty { rows.append([label] + percentileCells(s)) }
            }
            lines += TextTable.render(headers: ["request time", "n", "p50", "p90", "p99", "max"], rows: rows)
        }
        return lines
    }

    private func headline(_ h: ExtensionHistory) -> String {
        "\(h.bundleIdentifier): " + counts(h)
    }

    /// "21 launches (first … last), 71 requests, 21 terminations, launch deadline 1 s".
    private func counts(_ h: ExtensionHistory) -> String {
        var parts = ["\(h.launches.count) launch\(h.launches.count == 1 ? "" : "es")"]
        if let first = h.launches.first?.time, let last = h.launches.last?.time {
            parts[0] += " (\(Self.bucketLabel(first, nil)) … \(Self.bucketLabel(last, nil)))"
        }
        parts.append("\(h.requests.count) request\(h.requests.count == 1 ? "" : "s")")
        parts.append("\(h.terminations.count) termination\(h.terminations.count == 1 ? "" : "s")")
        if let d = h.deadlineMicros { parts.append("launch deadline \(Micros.format(d))") }
        return parts.joined(separator: ", ")
    }

    private func deadlineNote(_ h: ExtensionHistory) -> String {
        h.deadlineMicros.map { ", deadline \(Micros.format($0))" } ?? ""
    }

    private func percentileCells(_ s: LatencySummary) -> [String] {
        [String(s.count)] + [s.p50, s.p90, s.p99, s.max].map(Micros.format)
    }

    static func bands(_ bands: [Int: Int]) -> String {
        bands.isEmpty ? "–" : bands.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " ")
    }

    static func bytes(_ b: Int64) -> String {
        let mib = Double(b) / 1_048_576
        return mib >= 1 ? Micros.fixed(mib) + " MiB" : Micros.fixed(Double(b) / 1024) + " KiB"
    }

    /// Local time: the bucket's start at its resolution, or a moment to the second (nil).
    static func bucketLabel(_ date: Date, _ bucket: ReportBucket?) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        switch bucket {
        case .day: f.dateFormat = "yyyy-MM-dd"
        case .hour, .auto: f.dateFormat = "yyyy-MM-dd HH:00"
        case nil: f.dateFormat = "yyyy-MM-dd HH:mm:ss"
        }
        return f.string(from: date)
    }

    static func iso(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.timeZone = .current
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: date)
    }

    // MARK: JSON

    package var json: [String: Any] {
        [
            "stateDirectory": stateDirectory, "percentiles": "exact-nearest-rank",
            "fleet": ReportFleet(histories).json, "extensions": histories.map(extensionJSON),
        ]
    }

    private func extensionJSON(_ h: ExtensionHistory) -> [String: Any] {
        var phases: [String: Any] = [:]
        for name in h.phaseNames { phases[name] = h.summary(name).json }
        let resolved = h.resolved(bucket)
        var requests: [String: Any] = ["total": h.requests.count, "outcomes": h.requestOutcomes]
        for (label, cold) in [("cold", true), ("warm", false)] {
            let s = h.requestTotals(cold: cold)
            if !s.isEmpty { requests[label] = s.json }
        }
        return [
            "bundleIdentifier": h.bundleIdentifier,
            "deadlineMicros": h.deadlineMicros.map { Int($0) as Any } ?? NSNull(),
            "launches": h.launches.count,
            "phases": phases,
            "bucket": resolved.rawValue,
            "overTime": h.overTime(bucket).map { b -> [String: Any] in
                var o = b.summary.json
                o["start"] = Self.iso(b.start)
                return o
            },
            "byVersion": h.byVersion.map { v -> [String: Any] in
                var o = v.summary.json
                o["version"] = v.version
                o["firstSeen"] = Self.iso(v.firstSeen)
                o["lastSeen"] = Self.iso(v.lastSeen)
                return o
            },
            "terminations": [
                "total": h.terminations.count,
                "byReason": h.terminationsByReason.map { r -> [String: Any] in
                    [
                        "reason": r.reason.rawValue, "count": r.count, "last": Self.iso(r.last), "lastMessage": r.lastMessage,
                        "bands": Dictionary(uniqueKeysWithValues: r.bands.map { (String($0.key), $0.value) }),
                        "medianFootprintBytes": r.medianFootprintBytes.map { Int($0) as Any } ?? NSNull(),
                    ]
                },
            ] as [String: Any],
            "requests": requests,
        ]
    }

    // MARK: HTML

    package func html(generated: Date = Date()) -> HTMLPage {
        var page = HTMLPage(title: "appex report")
        page.heading("Launch and termination report", level: 1)
        page.paragraph(
            "\(stateDirectory) · \(histories.count) extension\(histories.count == 1 ? "" : "s") · \(ProfileOutput.timestamp(generated))",
            cssClass: "meta")
        if histories.isEmpty { page.paragraph("No history.") } else { ReportFleet(histories).html(&page) }
        for h in histories {
            page.heading(h.bundleIdentifier, level: 2, id: h.bundleIdentifier)
            page.paragraph(counts(h), cssClass: "meta")
            if !h.launches.isEmpty {
                page.table(
                    headers: ["phase", "p50", "p90", "p99", "max", "n"],
                    rows: h.phaseNames.map { name in
                        let s = h.summary(name)
                        return [name] + [s.p50, s.p90, s.p99, s.max].map(Micros.format) + [String(s.count)]
                    }, caption: "Launch phases over the whole history (Docs/profiling.md).")
                let resolved = h.resolved(bucket)
                let buckets = h.overTime(bucket)
                page.heading("Launch time by \(resolved.rawValue)", level: 3)
                page.figure(
                    SVGChart.percentileLines(
                        buckets.map { SVGChart.Point(label: Self.bucketLabel($0.start, resolved), summary: $0.summary) },
                        deadline: h.deadlineMicros, title: "Launch time (decision → check-in) by \(resolved.rawValue)"),
                    caption:
                        "p50, p90 and p99 of the launches in each \(resolved.rawValue) (local time) that had any; logarithmic time axis; red: the launch deadline."
                )
                let versions = h.byVersion
                page.heading("Launch time by version", level: 3)
                page.figure(
                    SVGChart.percentileBars(
                        versions.map { SVGChart.Point(label: $0.version, summary: $0.summary) },
                        deadline: h.deadlineMicros, title: "Launch time (decision → check-in) by bundle version"),
                    caption: "Versions in the order they first launched.")
                page.table(
                    headers: ["version", "n", "p50", "p90", "p99", "max", "first launch", "last launch"],
                    rows: versions.map { v in
                        [v.version] + percentileCells(v.summary) + [Self.bucketLabel(v.firstSeen, nil), Self.bucketLabel(v.lastSeen, nil)]
                    })
            }
            if !h.terminations.isEmpty {
                let reasons = h.terminationsByReason
                page.heading("Terminations by reason", level: 3)
                page.figure(
                    SVGChart.countBars(reasons.map { ($0.reason.rawValue, $0.count) }, title: "\(h.terminations.count) terminations"),
                    caption: "How instances ended (Docs/supervisor.md has the reasons).")
                page.table(
                    headers: ["reason", "count", "share", "bands", "footprint p50", "last", "last message"],
                    rows: reasons.map { r in
                        [
                            r.reason.rawValue, String(r.count), Micros.percent(Double(r.count), of: Double(h.terminations.count)),
                            Self.bands(r.bands), r.medianFootprintBytes.map(Self.bytes) ?? "–", Self.bucketLabel(r.last, nil), r.lastMessage,
                        ]
                    })
            }
            if !h.requests.isEmpty {
                page.heading("Requests", level: 3)
                let outcomes = h.requestOutcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                var rows: [[String]] = []
                for (label, cold) in [("cold", true), ("warm", false)] {
                    let s = h.requestTotals(cold: cold)
                    if !s.isEmpty { rows.append([label] + percentileCells(s)) }
                }
                page.table(
                    headers: ["request time", "n", "p50", "p90", "p99", "max"], rows: rows,
                    caption: "\(h.requests.count) requests: \(outcomes).")
            }
        }
        page.paragraph("Made by appex report from the history in the state database. Percentiles are exact (nearest rank).", cssClass: "note")
        return page
    }
}
