import AppexCommandSupport
import AppexLaunchReport
import AppexRegistry
import AppexSupervisor
import ArgumentParser
import Foundation

/// `appex report`: the history in the state database as launch-time percentiles over time and
/// by version, and terminations by reason (Docs/profiling.md). Reads the database directly, so
/// it works whether or not appexd runs; the database of the appexd at the socket when one
/// answers (HistorySource).
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Launch times and terminations from the history.",
        discussion: """
            Launch times over time and by version, and terminations by reason, from the history. \
            Reads the launches, requests and terminations appexd (or an embedded supervisor: \
            appex request --bundle, appex profile) recorded in the state directory's database \
            (--state-dir, else the one of the appexd at the socket, else the default), \
            at most the newest --limit rows of each (the database keeps 10000). Launch time is \
            decision → check-in, what the launch deadline bounds; the deadline is the one the \
            shipped policies (and --policy-dir) give each extension still installed.
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
    @Option(
        help:
            "State directory (default: the one of the appexd at the socket; with none answering, /var/lib/appex as root, $XDG_STATE_HOME/appex otherwise)."
    )
    var stateDir: String?
    @Option(help: "appexd's control socket (default $APPEX_SOCKET, else /run/appex/appexd.sock).")
    var socket: String?
    @OptionGroup var policyOverlays: PolicyOverlayOptions

    func validate() throws {
        guard limit >= 1 else { throw ValidationError("--limit must be at least 1, not \(limit)") }
    }

    func run() async throws {
        let source = try await HistorySource.resolve(stateDir: stateDir, socket: socket)
        let state = source.stateDirectory
        let registry = try source.registry(command: "appex report")
        let histories = try HistoryReader.read(
            registry, extension: extensionIdentifier, limit: limit,
            policies: policyOverlays.directories)
        if let extensionIdentifier, histories.allSatisfy(\.isEmpty) {
            throw CommandFailure(.noInput, "appex report: \(extensionIdentifier) has no launches, requests or terminations in \(source.sourceLine)")
        }
        let output = ReportOutput(stateDirectory: state, histories: histories, bucket: bucket)
        if let html {
            do { try output.html().write(to: html) } catch {
                throw CommandFailure(.cannotCreate, "appex report: cannot write \(html): \(error)")
            }
        }
        if json {
            try JSONOutput.print(output.json)
        } else {
            print(source.sourceLine)
            print(output.human)
            if let html { print("Page: \(html)") }
        }
    }
}

extension ReportBucket: ExpressibleByArgument {}
