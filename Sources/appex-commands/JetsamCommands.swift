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
        abstract: "Show appexd's memory governor: the pressure level and every live extension in victim order (first listed dies first).")
    @OptionGroup var daemon: DaemonOptions

    func run() async throws {
        let report: JetsamReport
        do {
            let client = try HostClient.connect(socketPath: daemon.socket, identifier: "appex-cli")
            defer { client.close() }
            report = try await client.jetsam()
        } catch let e as HostClientError {
            FileHandle.standardError.write(Data("appex: \(e.reason.map { "\($0): " } ?? "")\(e.message)\n".utf8))
            throw ExitCode(1)
        }
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
            lines.append(zip(row, widths).enumerated().map { i, p in
                i == row.count - 1 ? p.0 : p.0.padding(toLength: p.1, withPad: " ", startingAt: 0)
            }.joined(separator: "  "))
        }
        if r.entries.isEmpty { lines.append("(no live extensions)") }
        else if r.entries.contains(where: \.overSoftLimit) { lines.append("! over its soft limit: an early victim") }
        return lines.joined(separator: "\n")
    }

    static func mib(_ b: UInt64) -> String {
        let m = Double(b) / 1_048_576
        return m >= 10 ? "\(Int(m.rounded()))M" : String(format: "%.1fM", m)
    }

    static func seconds(_ us: UInt64) -> String { String(format: "%.1fs", Double(us) / 1_000_000) }
}

/// `appex kills`: the termination records in the state database, newest first.
struct KillsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kills",
        abstract: "List the terminations appexd caused or observed (reason, band, footprint, trigger to death), newest first.")
    @Argument(help: "Only this extension's.") var bundleIdentifier: String?
    @Option(help: "appexd's state directory (default: /var/lib/appex as root).") var stateDir: String?
    @Option(help: "At most this many records.") var limit = 50
    @Flag(help: "JSON output.") var json = false

    func run() throws {
        let dir = stateDir ?? SupervisorOptions.defaultStateDirectory
        guard FileManager.default.fileExists(atPath: dir) else {
            FileHandle.standardError.write(Data("appex: no state directory at \(dir)\n".utf8))
            throw ExitCode(1)
        }
        let records = try Registry(stateDirectory: dir).terminations(of: bundleIdentifier, limit: limit)
        if json {
            try JSONOutput.print(records.map(Self.json))
            return
        }
        if records.isEmpty { print("(no terminations recorded)"); return }
        for r in records {
            let band = "band \(r.band.map { "\($0) \(JetsamBand(value: $0)?.name ?? String($0))" } ?? "?")"
            let footprint = r.footprintBytes.map { ", footprint \(JetsamCommand.mib(UInt64(max($0, 0))))" } ?? ""
            let t2d = r.triggerToDeathMicros.map { ", trigger→death \(String(format: "%.1f", Double($0) / 1000)) ms" } ?? ""
            print("\(Self.time(r))  \(r.reason)  \(r.bundleIdentifier)  \(band)\(footprint)\(t2d)  — \(r.message)")
        }
    }

    static func json(_ r: TerminationHistory) -> [String: Any] {
        [
            "bundleIdentifier": r.bundleIdentifier, "reason": r.reason, "message": r.message,
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
