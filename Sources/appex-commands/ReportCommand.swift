import AppexRegistry
import AppexSupervisor
import ArgumentParser
import Foundation

/// `appex report`: the history in the state database as launch-time percentiles over time and
/// by version, and terminations by reason (Docs/profiling.md). Reads the database directly, so
/// it works whether or not appexd runs.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Launch times over time and by version, and terminations by reason, from the history.",
        discussion: """
            Reads the launches, requests and terminations appexd (or an embedded supervisor: \
            appex request --bundle, appex profile) recorded in the state directory's database, \
            at most the newest --limit rows of each (the database keeps 10000). Launch time is \
            decision → check-in, what the launch deadline bounds; the deadline is the one the \
            shipped policies (and --policies) give each extension still installed.
            """)

    @Argument(help: "Only this extension (bundle identifier); default: every extension in the history.")
    var extensionIdentifier: String?
    @Flag(help: "One JSON object: per extension, phases, overTime, byVersion, terminations, requests.")
    var json = false
    @Option(help: "Also write a self-contained HTML page with plots.")
    var html: String?
    @Option(help: "Group launches over time by hour, day, or auto (hours when the history spans up to two days).")
    var bucket: ReportBucket = .auto
    @Option(help: "Rows read per history table, newest first.")
    var limit: Int = Registry.historyLimit
    @Option(help: "State directory (default /var/lib/appex as root, $XDG_STATE_HOME/appex otherwise).")
    var stateDir: String?
    @Option(name: .customLong("policies"), help: "A policy directory layered over the shipped ones (for the deadlines).")
    var policyDirectories: [String] = []

    func validate() throws {
        guard limit >= 1 else { throw ValidationError("--limit wants at least 1") }
    }

    func run() async throws {
        let state = stateDir ?? SupervisorOptions.defaultStateDirectory
        let histories: [ExtensionHistory]
        do {
            histories = try HistoryReader.read(stateDirectory: state, extension: extensionIdentifier, limit: limit,
                                               policies: policyDirectories)
        } catch {
            FileHandle.standardError.write(Data("appex report: \(error)\n".utf8))
            throw ExitCode(1)
        }
        let output = ReportOutput(stateDirectory: state, histories: histories, bucket: bucket)
        if let html {
            try output.html().write(to: html)
        }
        if json {
            try JSONOutput.print(output.json)
        } else {
            print(output.human)
            if let html { print("Page: \(html)") }
        }
    }
}
