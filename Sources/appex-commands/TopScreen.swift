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

    static let header = "   PID  BAND             STATE       FOOTPRINT  LIMIT         USE        CPU%  LAUNCH   IN BAND  EXTENSION"

    func lines() -> [ConsoleText] {
        var out: [ConsoleText] = []
        let clock = Self.clock.string(from: time)
        out.append("appex top".consoleText(.init(color: nil, isBold: true))
                   + " — appexd at \(socket)   \(clock)   every \(String(format: "%.1f", interval))s   q: quit".consoleText())
        out.append(pressureLine())
        out.append(bandsLine())
        out.append("".consoleText())
        out.append(Self.header.consoleText(.init(color: .black, background: .white)))
        let room = max(height - out.count - 1, 1)
        let shown = report.entries.prefix(report.entries.count > room ? room - 1 : room)
        for entry in shown { out.append(row(entry)) }
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

    private func row(_ e: JetsamEntry) -> ConsoleText {
        // The limit that applies now: the active pair while it works for a request.
        let limit = e.active ? e.activeHardLimitBytes : e.inactiveHardLimitBytes
        let share = limit > 0 ? Double(e.footprintBytes) / Double(limit) : 0
        let band = "\(e.band) \(JetsamCommand.bandName(e.band))"
        let cpu = cpuPercent[TopInstanceKey(e)].map { String(format: "%.1f", $0) } ?? "-"
        let launch = e.lastLaunchMicros.map(Self.duration) ?? "-"
        var text = (Self.pad(String(e.pid), 6, right: true) + "  " + Self.pad(band, 15) + "  " + Self.pad(e.state, 10)
                    + "  " + Self.pad(JetsamCommand.mib(e.footprintBytes) + (e.overSoftLimit ? "!" : ""), 9, right: true)
                    + "  " + Self.pad(JetsamCommand.mib(limit) + (e.active ? " act" : " idl"), 9) + "  ").consoleText()
        let barStyle: ConsoleStyle = share >= 1 ? .error : share >= 0.8 || e.overSoftLimit ? .warning : .success
        text += Self.bar(share).consoleText(barStyle)
        text += (" " + Self.pad("\(Int((share * 100).rounded()))%", 4, right: true) + "  " + Self.pad(cpu, 5, right: true)
                 + "  " + Self.pad(launch, 7, right: true) + "  " + Self.pad(Self.duration(e.timeInBandMicros), 7, right: true)
                 + "  \(e.bundleIdentifier)#\(e.instance)").consoleText()
        return text
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
