import AppexCommandSupport
import AppexHostClient
import AppexPolicy
import AppexRegistry
import AppexSupervisor
import AppexWire
import ArgumentParser
import Foundation

/// `appex jetsam`: appexd's priority list, like XNU's memorystatus list.
struct JetsamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jetsam",
        abstract: "Show appexd's memory governor and its victim order.",
        discussion: "Show appexd's memory governor: the pressure level and every live extension in victim order (first listed dies first).")
    @OptionGroup var daemon: DaemonOptions

    func run() async throws {
        let report = try await daemon.connected { try await $0.jetsam() }
        if daemon.json {
            try JSONOutput.print(Self.json(report))
        } else {
            print(Self.table(report))
        }
    }

    static func json(_ r: JetsamReport) -> [String: Any] {
        [
            "level": r.level, "budgetBytes": r.budgetBytes.jsonOrNull, "footprintBytes": r.footprintBytes,
            "availableBytes": r.availableBytes.jsonOrNull,
            "extensions": r.entries.map { e -> [String: Any] in
                [
                    "bundleIdentifier": e.bundleIdentifier, "instance": e.instance, "pid": e.pid, "band": e.band,
                    "bandName": bandName(e.band), "state": e.state, "footprintBytes": e.footprintBytes,
                    "activeSoftLimitBytes": e.activeSoftLimitBytes, "activeHardLimitBytes": e.activeHardLimitBytes,
                    "inactiveSoftLimitBytes": e.inactiveSoftLimitBytes, "inactiveHardLimitBytes": e.inactiveHardLimitBytes,
                    "limits": e.active ? "active" : "inactive", "overSoftLimit": e.overSoftLimit,
                    "timeInBandMicros": e.timeInBandMicros,
                ]
            },
        ]
    }

    static func bandName(_ band: UInt32) -> String {
        JetsamBand(value: Int(band))?.name ?? String(band)
    }

    static func table(_ r: JetsamReport) -> String {
        let budget = r.budgetBytes.map { " of budget \(mib($0))" } ?? " (no budget)"
        let available = r.availableBytes.map { ", MemAvailable \(mib($0))" } ?? ""
        var lines = ["pressure \(r.level): extensions' footprint \(mib(r.footprintBytes))\(budget)\(available)"]
        let header = ["BAND", "PID", "FOOTPRINT", "ACTIVE soft/hard", "INACTIVE soft/hard", "LIMITS", "IN BAND", "STATE", "EXTENSION"]
        var rows = [header]
        for e in r.entries {
            rows.append([
                "\(e.band) \(bandName(e.band))", String(e.pid), mib(e.footprintBytes) + (e.overSoftLimit ? " !" : ""),
                "\(mib(e.activeSoftLimitBytes))/\(mib(e.activeHardLimitBytes))",
                "\(mib(e.inactiveSoftLimitBytes))/\(mib(e.inactiveHardLimitBytes))",
                e.active ? "active" : "inactive", seconds(e.timeInBandMicros), e.state, "\(e.bundleIdentifier)#\(e.instance)",
            ])
        }
        let widths = (0..<header.count).map { c in rows.map { $0[c].count }.max() ?? 0 }
        for row in rows {
            lines.append(
                zip(row, widths).enumerated().map { i, p in
                    i == row.count - 1 ? p.0 : p.0.padding(toLength: p.1, withPad: " ", startingAt: 0)
                }.joined(separator: "  "))
        }
        if r.entries.isEmpty {
            lines.append("(no live extensions)")
        } else if r.entries.contains(where: \.overSoftLimit) {
            lines.append("! over its soft limit: an early victim")
        }
        return lines.joined(separator: "\n")
    }

    static func mib(_ b: UInt64) -> String {
        let m = Double(b) / 1_048_576
        return m >= 10 ? "\(Int(m.rounded()))M" : String(format: "%.1fM", m)
    }

    static func seconds(_ us: UInt64) -> String { String(format: "%.1fs", Double(us) / 1_000_000) }
}

/// `appex kills`: the termination records in the state database, newest first; with
/// --follow, new ones as they are recorded.
struct KillsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kills",
        abstract: "List the terminations appexd recorded, newest first.",
        discussion: """
            List the terminations appexd caused or observed (reason, band, footprint, trigger to death), newest first. \
            Reads the records of the appexd at the socket (its state directory, which it is \
            asked for), or of --state-dir; with no appexd answering, of the default state \
            directory. The first line says which database was read.
            """)
    @Argument(help: "Only this extension's.") var bundleIdentifier: String?
    @Option(help: "Read this state directory (default: the one of the appexd at the socket).") var stateDir: String?
    @Option(help: "appexd's control socket (default $APPEX_SOCKET, else /run/appex/appexd.sock).") var socket: String?
    @Option(help: "At most this many records.") var limit = 50
    @Flag(
        name: [.customShort("f"), .long],
        help: "Keep running and print each termination as it is recorded (oldest first; one JSON object a line with --json).")
    var follow = false
    @Flag(help: "JSON output.") var json = false

    func validate() throws {
        guard limit >= 1 else { throw ValidationError("--limit must be at least 1, not \(limit)") }
    }

    func run() async throws {
        let source = try await HistorySource.resolve(stateDir: stateDir, socket: socket)
        let registry = try source.registry(command: "appex kills")
        let records = try registry.terminations(of: bundleIdentifier, limit: limit)
        if follow {
            try await Self.follow(registry, bundleIdentifier: bundleIdentifier, after: records.first, json: json, source: source)
        }
        if json {
            try JSONOutput.print(records.map(Self.json))
            return
        }
        print(source.sourceLine)
        if records.isEmpty { print("no terminations recorded" + (bundleIdentifier.map { " for \($0)" } ?? "")) }
        for r in records { print(Self.line(r)) }
    }

    /// Polls the database for records newer than `after`, printing each once, until killed.
    static func follow(
        _ registry: Registry, bundleIdentifier: String?, after newest: TerminationHistory?,
        json: Bool, source: HistorySource
    ) async throws -> Never {
        if !json { FileHandle.standardOutput.write(Data((source.sourceLine + ", following\n").utf8)) }
        var seen = newest.map(Self.order)
        while true {
            let fresh = try registry.terminations(of: bundleIdentifier, limit: 1000)
                .filter { r in seen.map { Self.order(r) > $0 } ?? true }
                .sorted { Self.order($0) < Self.order($1) }
            for r in fresh {
                // Unbuffered: whoever reads a pipe sees each record as it comes.
                if json {
                    try JSONOutput.writeLine(Self.json(r))
                } else {
                    FileHandle.standardOutput.write(Data((Self.line(r) + "\n").utf8))
                }
            }
            if let last = fresh.last { seen = Self.order(last) }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// The order records are written in: time to the microsecond, then the row.
    static func order(_ r: TerminationHistory) -> (Int64, Int64) {
        (r.timeMicros ?? Int64((r.time.timeIntervalSince1970 * 1_000_000).rounded()), r.id ?? 0)
    }

    static func line(_ r: TerminationHistory) -> String {
        let band = "band \(r.band.map { "\($0) \(JetsamBand(value: $0)?.name ?? String($0))" } ?? "?")"
        let footprint = r.footprintBytes.map { ", footprint \(JetsamCommand.mib(UInt64(max($0, 0))))" } ?? ""
        let t2d = r.triggerToDeathMicros.map { ", trigger→death \(String(format: "%.1f", Double($0) / 1000)) ms" } ?? ""
        return "\(Self.time(r))  \(r.reason.rawValue)  \(r.bundleIdentifier)  \(band)\(footprint)\(t2d)  — \(r.message)"
    }

    static func json(_ r: TerminationHistory) -> [String: Any] {
        [
            "bundleIdentifier": r.bundleIdentifier, "reason": r.reason.rawValue, "message": r.message,
            "band": r.band.jsonOrNull, "footprintBytes": r.footprintBytes.jsonOrNull,
            "triggerToDeathMicros": r.triggerToDeathMicros.jsonOrNull, "peakMemoryBytes": r.peakMemoryBytes.jsonOrNull,
            "signal": r.signal.jsonOrNull, "exitStatus": r.exitStatus.jsonOrNull, "requestsServed": r.requestsServed,
            "time": time(r), "timeMicros": r.timeMicros.jsonOrNull,
        ]
    }

    /// ISO 8601 in UTC with microseconds.
    static func time(_ r: TerminationHistory) -> String {
        let micros = r.timeMicros ?? Int64((r.time.timeIntervalSince1970 * 1_000_000).rounded())
        let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        let whole = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(seconds)))
        let fraction = String(format: ".%06lld", micros - seconds * 1_000_000)
        return whole.dropLast() + fraction + "Z"
    }
}
