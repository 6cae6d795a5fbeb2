import AppexPolicy
import AppexWire
import ConsoleKitTerminal
import Foundation

/// One frame of `appex top`, from a jetsam report and the CPU rates between it and the one
/// before: a header (pressure level, footprint against the budget, live instances by band)
/// and a row per live instance in victim order (the first row dies first). Pure: the
/// command draws it, the tests read it.
struct TopScreen {
    var report: JetsamReport
    /// Percent of one core per instance since the previous report; absent on the first.
    var cpuPercent: [TopInstanceKey: Double]
    var socket: String
    var interval: Double
    var time: Date
    var width: Int
    var height: Int
    /// Why the frame is old: appexd stopped answering, and top is reconnecting.
    var problem: String? = nil

    /// One column of the table. The extension's name comes first and is never dropped; the
    /// others are kept in `priority` order while they fit beside it.
    struct Column: Sendable {
        var title: String
        var width: Int
        var right: Bool
        /// Lower is kept longer.
        var priority: Int
        var cell: @Sendable (TopScreen, JetsamEntry) -> ConsoleText
    }

    /// The extension column's least width when others must go.
    static let extensionMinimum = 24

    static let columns: [Column] = [
        Column(title: "PID", width: 7, right: true, priority: 0) { _, e in String(e.pid).consoleText() },
        Column(title: "BAND", width: 11, right: false, priority: 5) { _, e in JetsamCommand.bandName(e.band).consoleText() },
        Column(title: "STATE", width: 10, right: false, priority: 4) { _, e in e.state.consoleText() },
        Column(title: "FOOTPRINT", width: 9, right: true, priority: 1) { _, e in
            (JetsamCommand.mib(e.footprintBytes) + (e.overSoftLimit ? "!" : "")).consoleText()
        },
        Column(title: "LIMIT", width: 9, right: false, priority: 6) { _, e in
            (JetsamCommand.mib(limit(e)) + (e.active ? " act" : " idl")).consoleText()
        },
        Column(title: "USE", width: 12, right: false, priority: 7) { _, e in bar(share(e)).consoleText(barStyle(e)) },
        Column(title: "USE%", width: 4, right: true, priority: 2) { _, e in
            "\(Int((share(e) * 100).rounded()))%".consoleText(barStyle(e))
        },
        Column(title: "CPU%", width: 5, right: true, priority: 3) { s, e in
            (s.cpuPercent[TopInstanceKey(e)].map { String(format: "%.1f", $0) } ?? "-").consoleText()
        },
        Column(title: "LAUNCH", width: 7, right: true, priority: 9) { _, e in (e.lastLaunchMicros.map(duration) ?? "-").consoleText() },
        Column(title: "IN BAND", width: 7, right: true, priority: 8) { _, e in duration(e.timeInBandMicros).consoleText() },
    ]

    /// The columns that fit `width` beside the extension's name (all of them when the width is
    /// unknown: a pipe), in display order, and the width left for the name. The name keeps its
    /// whole length, or at least half the window; then the columns go in by priority until the
    /// next one does not fit.
    func layout() -> (columns: [Column], nameWidth: Int) {
        let names = report.entries.map { "\($0.bundleIdentifier)#\($0.instance)".count }
        let natural = max(names.max() ?? 0, "EXTENSION".count)
        guard width > 0 else { return (Self.columns, natural) }
        let reserved = min(natural, max(Self.extensionMinimum, width / 2))
        var kept: Set<String> = []
        var used = 0
        for c in Self.columns.sorted(by: { $0.priority < $1.priority }) {
            guard used + 2 + c.width <= width - reserved else { break }
            kept.insert(c.title)
            used += 2 + c.width
        }
        return (Self.columns.filter { kept.contains($0.title) }, min(natural, max(width - used, 1)))
    }

    func headerLine(_ layout: (columns: [Column], nameWidth: Int)) -> String {
        var line = Self.pad("EXTENSION", layout.nameWidth)
        for c in layout.columns { line += "  " + Self.pad(c.title, c.width, right: c.right) }
        return line
    }

    func lines() -> [ConsoleText] {
        var out: [ConsoleText] = []
        let clock = Self.clock.string(from: time)
        out.append(
            "appex top".consoleText(.init(color: nil, isBold: true))
                + " — appexd at \(socket)   \(clock)   every \(String(format: "%.1f", interval))s   q: quit".consoleText())
        if let problem {
            out.append(problem.consoleText(.error))
        }
        out.append(pressureLine())
        out.append(bandsLine())
        out.append("".consoleText())
        let layout = layout()
        out.append(headerLine(layout).consoleText(.init(color: .black, background: .white)))
        let room = max(height - out.count - 1, 1)
        let shown = report.entries.prefix(report.entries.count > room ? room - 1 : room)
        for entry in shown { out.append(row(entry, layout)) }
        if shown.count < report.entries.count {
            out.append("   … \(report.entries.count - shown.count) more (a taller window shows them)".consoleText(.info))
        }
        if report.entries.isEmpty { out.append("   (no live extensions)".consoleText()) }
        return out.map { clip($0) }
    }

    private func pressureLine() -> ConsoleText {
        let style: ConsoleStyle
        switch report.level {
        case "critical": style = .error
        case "warning": style = .warning
        default: style = .success
        }
        var text = "pressure ".consoleText() + report.level.consoleText(style)
        text += "   extensions' footprint \(JetsamCommand.mib(report.footprintBytes))".consoleText()
        if let budget = report.budgetBytes, budget > 0 {
            text += " of budget \(JetsamCommand.mib(budget)) (\(Int(Double(report.footprintBytes) * 100 / Double(budget)))%)".consoleText()
        } else {
            text += " (no budget)".consoleText()
        }
        if let available = report.availableBytes {
            text += "   MemAvailable \(JetsamCommand.mib(available))".consoleText()
        }
        return text
    }

    private func bandsLine() -> ConsoleText {
        var counts: [UInt32: Int] = [:]
        for e in report.entries { counts[e.band, default: 0] += 1 }
        let bands = counts.keys.sorted(by: >).map { "\(JetsamCommand.bandName($0)) \(counts[$0]!)" }
        let cpu = cpuPercent.values.reduce(0, +)
        return "live \(report.entries.count)\(bands.isEmpty ? "" : ": " + bands.joined(separator: ", "))   CPU \(String(format: "%.1f", cpu))%"
            .consoleText()
    }

    private func row(_ e: JetsamEntry, _ layout: (columns: [Column], nameWidth: Int)) -> ConsoleText {
        var text = Self.pad(Self.fit("\(e.bundleIdentifier)#\(e.instance)", layout.nameWidth), layout.nameWidth).consoleText()
        for c in layout.columns {
            let cell = c.cell(self, e)
            let fill = String(repeating: " ", count: max(0, c.width - cell.description.count))
            text += "  ".consoleText()
            text += c.right ? fill.consoleText() + cell : cell + fill.consoleText()
        }
        return text
    }

    /// The limit that applies now: the active pair while it works for a request.
    static func limit(_ e: JetsamEntry) -> UInt64 { e.active ? e.activeHardLimitBytes : e.inactiveHardLimitBytes }

    static func share(_ e: JetsamEntry) -> Double {
        let l = limit(e)
        return l > 0 ? Double(e.footprintBytes) / Double(l) : 0
    }

    static func barStyle(_ e: JetsamEntry) -> ConsoleStyle {
        let s = share(e)
        return s >= 1 ? .error : s >= 0.8 || e.overSoftLimit ? .warning : .success
    }

    /// A name cut to `n` characters keeps its end (the instance number and the distinctive
    /// last parts of a reverse-DNS identifier): `…share.extension#3`.
    static func fit(_ s: String, _ n: Int) -> String {
        guard s.count > n, n > 1 else { return s }
        return "…" + String(s.suffix(n - 1))
    }

    /// `[######    ]`: ten cells, the footprint's share of the limit that applies now.
    static func bar(_ share: Double) -> String {
        let filled = max(0, min(10, Int((share * 10).rounded())))
        return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: 10 - filled) + "]"
    }

    static func duration(_ micros: UInt64) -> String {
        switch micros {
        case ..<1_000: return "\(micros)µs"
        case ..<1_000_000: return String(format: "%.1fms", Double(micros) / 1000)
        case ..<600_000_000: return String(format: "%.1fs", Double(micros) / 1_000_000)
        default: return "\(micros / 60_000_000)m"
        }
    }

    static func pad(_ s: String, _ n: Int, right: Bool = false) -> String {
        guard s.count < n else { return s }
        let fill = String(repeating: " ", count: n - s.count)
        return right ? fill + s : s + fill
    }

    /// A line wider than the window would wrap and push the frame down: cut it.
    private func clip(_ text: ConsoleText) -> ConsoleText {
        guard width > 0 else { return text }
        var left = width
        var fragments: [ConsoleTextFragment] = []
        for f in text.fragments where left > 0 {
            let s = f.string.count <= left ? f.string : String(f.string.prefix(left))
            left -= s.count
            fragments.append(ConsoleTextFragment(string: s, style: f.style))
        }
        return ConsoleText(fragments: fragments)
    }

    private static let clock: DateFormatter = {
        let f = DateFormatter()
        f.dateFormat = "HH:mm:ss"
        return f
    }()
}

/// An instance across two reports: the same extension's same instance number.
struct TopInstanceKey: Hashable {
    var bundleIdentifier: String
    var instance: UInt64

    init(_ e: JetsamEntry) {
        bundleIdentifier = e.bundleIdentifier
        instance = e.instance
    }
}

/// CPU rates from two reports: the CPU time an instance used between them over the wall
/// time between them, in percent of one core.
struct TopCPUSampler {
    private var previous: [TopInstanceKey: UInt64] = [:]
    private var previousAt: UInt64?

    mutating func rates(_ report: JetsamReport, at now: UInt64) -> [TopInstanceKey: Double] {
        var current: [TopInstanceKey: UInt64] = [:]
        var rates: [TopInstanceKey: Double] = [:]
        for e in report.entries {
            guard let cpu = e.cpuMicros else { continue }
            let key = TopInstanceKey(e)
            current[key] = cpu
            if let before = previous[key], let at = previousAt, now > at, cpu >= before {
                rates[key] = Double(cpu - before) * 100_000 / Double(now - at)
            }
        }
        previous = current
        previousAt = now
        return rates
    }
}
