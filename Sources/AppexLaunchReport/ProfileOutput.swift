import AppexCommandSupport
import Foundation

/// What `appex profile` shows: a table of p50/p90/p99/max per phase against the launch
/// deadline, grouped into the sandbox's share and the extension's start-up; the same as JSON;
/// or a page with a distribution plot per phase.
package struct ProfileOutput {
    let run: ProfileSamples
    /// `--baseline`: an earlier run to compare with.
    var baseline: ProfileBaseline? = nil

    package init(run: ProfileSamples, baseline: ProfileBaseline? = nil) {
        self.run = run
        self.baseline = baseline
    }

    var deadline: UInt64 { run.deadlineMicros }

    /// Mean µs of the sandbox's share (spawn) and of the extension's start-up; they add up to
    /// the mean check-in, because startup is checkIn − spawn launch by launch.
    var shares: (sandbox: Double, startup: Double)? {
        guard !run.warm else { return nil }
        let spawn = run.summary("spawn"), startup = run.summary("startup")
        guard !spawn.isEmpty, !startup.isEmpty else { return nil }
        return (spawn.mean, startup.mean)
    }

    var modeText: String {
        run.warm
            ? "\(run.samples.count) warm requests to one instance"
            : "\(run.samples.count) cold launch\(run.samples.count == 1 ? "" : "es")"
    }

    // MARK: terminal

    package var human: String {
        var lines: [String] = []
        let version = run.version.map { " (version \($0))" } ?? ""
        lines.append("\(run.bundleIdentifier)\(version): \(modeText), launch deadline \(Micros.format(deadline))")
        if run.samples.isEmpty {
            lines.append("Nothing was measured.")
        } else {
            lines.append("")
            lines.append(pad("", 12) + ["p50", "p90", "p99", "max"].map { lpad($0, 10) }.joined() + lpad("n", 6))
            var group: LaunchPhaseCatalog.Share?
            for name in run.phaseNames {
                let share = LaunchPhaseCatalog.phase(name)?.share
                if share != group, let share {
                    group = share
                    lines.append(Self.groupTitle(share))
                }
                let s = run.summary(name)
                var line = pad("  " + name, 12) + [s.p50, s.p90, s.p99, s.max].map { lpad(Micros.format($0), 10) }.joined()
                line += lpad(String(s.count), 6)
                if name == "checkIn" { line += "  p99 " + Micros.percent(Double(s.p99), of: Double(deadline)) + " of the deadline" }
                lines.append(line)
            }
            lines.append("")
            let checkIn = run.summary("checkIn")
            if !run.warm, !checkIn.isEmpty {
                lines.append(
                    "Check-in p99 \(Micros.format(checkIn.p99)) is \(Micros.percent(Double(checkIn.p99), of: Double(deadline))) of the \(Micros.format(deadline)) launch deadline (max \(Micros.format(checkIn.max)), \(Micros.percent(Double(checkIn.max), of: Double(deadline))))."
                )
            }
            if let shares {
                let total = shares.sandbox + shares.startup
                lines.append(
                    "Where check-in time goes (mean \(Micros.format(total))): sandbox \(Micros.format(shares.sandbox)) (\(Micros.percent(shares.sandbox, of: total))), extension start-up \(Micros.format(shares.startup)) (\(Micros.percent(shares.startup, of: total)))."
                )
            }
        }
        for (reason, n) in run.failures.sorted(by: { $0.key < $1.key }) {
            let message = run.failureMessages[reason].flatMap { $0.isEmpty || $0 == reason ? nil : $0 }
            lines.append("Not counted: \(n) \(reason)" + (message.map { " (\($0))" } ?? ""))
        }
        if let baseline, !run.samples.isEmpty { lines += baseline.human(run) }
        lines.append("Percentiles are exact (nearest rank) over the counted \(run.warm ? "requests" : "launches").")
        return lines.joined(separator: "\n")
    }

    static func groupTitle(_ share: LaunchPhaseCatalog.Share) -> String {
        switch share {
        case .sandbox: return "sandbox (appexd and the kernel)"
        case .extension: return "extension"
        case .launch: return "launch"
        case .request: return "request"
        }
    }

    private func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count) }
    private func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? " " + s : String(repeating: " ", count: n - s.count) + s }

    // MARK: JSON

    package var json: [String: Any] {
        var phases: [String: Any] = [:]
        for name in run.phaseNames { phases[name] = run.summary(name).json }
        var o: [String: Any] = [
            "bundleIdentifier": run.bundleIdentifier,
            "version": run.version.jsonOrNull,
            "mode": run.warm ? "warm" : "cold",
            "launches": run.samples.count,
            "requested": run.requested,
            "deadlineMicros": Int(deadline),
            "phases": phases,
            "failures": run.failures,
            "outcomes": run.outcomes,
            "percentiles": "exact-nearest-rank",
        ]
        if let baseline { o["baseline"] = baseline.json(run) }
        if let shares {
            o["share"] = [
                "sandboxMicros": Int(shares.sandbox.rounded()), "startupMicros": Int(shares.startup.rounded()),
                "sandbox": shares.sandbox / (shares.sandbox + shares.startup),
                "startup": shares.startup / (shares.sandbox + shares.startup),
            ]
        }
        return o
    }

    // MARK: HTML

    package func html(generated: Date = Date()) -> HTMLPage {
        var page = HTMLPage(title: "appex profile: \(run.bundleIdentifier)")
        page.heading("Launch profile: \(run.bundleIdentifier)", level: 1)
        let version = run.version.map { "version \($0) · " } ?? ""
        page.paragraph(
            "\(version)\(modeText) · launch deadline \(Micros.format(deadline)) · \(Self.timestamp(generated))",
            cssClass: "meta")
        if run.samples.isEmpty {
            page.paragraph("Nothing was measured.")
        } else {
            page.table(
                headers: ["phase", "p50", "p90", "p99", "max", "n", "p99 of deadline"],
                rows: run.phaseNames.map { name in
                    let s = run.summary(name)
                    return [
                        name, Micros.format(s.p50), Micros.format(s.p90), Micros.format(s.p99), Micros.format(s.max),
                        String(s.count), Micros.percent(Double(s.p99), of: Double(deadline)),
                    ]
                }, caption: "Per phase, µs to s; percentiles exact (nearest rank).")
            if let segments = segments() {
                page.figure(
                    SVGChart.stackedBar(segments, title: "Where check-in time goes (mean per launch)"),
                    caption:
                        "Blue: the sandbox's share (appexd and the kernel, until the extension's image runs). Orange: the extension's own start-up, from exec to its Hello."
                )
            }
            baseline?.html(run, &page)
            for name in run.phaseNames {
                let s = run.summary(name)
                let meaning = LaunchPhaseCatalog.phase(name)?.meaning ?? ""
                page.heading(name, level: 3, id: "phase-\(name)")
                page.figure(
                    SVGChart.distribution(s, deadline: deadline, label: name),
                    caption:
                        "\(meaning). Logarithmic time axis; dashed: p50, p90, p99; red: the launch deadline (an arrow at the right edge when it is more than 4× the largest sample, off the axis)."
                )
            }
        }
        if !run.failures.isEmpty {
            page.heading("Not counted")
            page.table(
                headers: ["reason", "launches", "first message"],
                rows: run.failures.sorted { $0.key < $1.key }.map {
                    [$0.key, String($0.value), run.failureMessages[$0.key] ?? ""]
                })
        }
        page.paragraph("Made by appex profile. Phases: Docs/profiling.md.", cssClass: "note")
        return page
    }

    /// The check-in split into its parts, as means per launch: the sandbox's phases, what
    /// else appexd spent before the image ran, and the extension's start-up.
    func segments() -> [SVGChart.Segment]? {
        guard !run.warm, shares != nil else { return nil }
        func mean(_ phase: String) -> Double {
            Double(run.samples.reduce(UInt64(0)) { $0 + ($1[phase] ?? 0) }) / Double(run.samples.count)
        }
        let parts = ["handOff", "view", "prepare", "clone", "sandbox", "exec"]
        let colors = ["#1a365d", "#2c5282", "#2b6cb0", "#3182ce", "#4299e1", "#63b3ed"]
        var segments = zip(parts, colors).map { SVGChart.Segment(name: $0, micros: mean($0), color: $1) }.filter { $0.micros > 0 }
        let rest = mean("spawn") - segments.reduce(0) { $0 + $1.micros }
        segments.append(SVGChart.Segment(name: "appexd (other)", micros: Swift.max(rest, 0), color: "#90cdf4"))
        segments.append(SVGChart.Segment(name: "extension start-up", micros: mean("startup"), color: "#dd6b20"))
        return segments
    }

    static func timestamp(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss ZZZZZ"
        return f.string(from: date)
    }
}
