import AppexCommandSupport
import AppexHostClient
import AppexRun
import AppexWire
import ArgumentParser
import Foundation

/// `appex transfers events --app ID`: waits as a containing app's host and prints the results
/// of its extensions' background sessions as appexd delivers them (HostTransferEvents), which
/// marks them delivered: the extension is not relaunched for them (Docs/transfers.md, "Events").
/// With --json, one JSON object per line.
struct TransfersEventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Take a containing app's transfer events as its host, and print them.",
        discussion: "Needs a uid that speaks for the app (appexd.yaml `apps`), or root.")
    @Option(help: "The containing app's bundle identifier.") var app: String
    @Option(help: "Exit after this many sessions' events (default: until interrupted).") var count: Int?
    @OptionGroup var daemon: DaemonOptions

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        try await daemon.connected(as: app) { client in
            FileHandle.standardError.write(Data("waiting for \(app)'s transfer events\n".utf8))
            var seen = 0
            for await events in client.transferEvents {
                // Written at once, not buffered: a script reads each session's events as they come.
                if daemon.json {
                    try JSONOutput.writeLine(Self.json(events))
                } else {
                    FileHandle.standardOutput.write(Data((Self.lines(events).joined(separator: "\n") + "\n").utf8))
                }
                seen += 1
                if let count, seen >= count { return }
            }
            throw ExitCode(ExitStatus.temporaryFailure.rawValue)  // appexd went away
        }
    }

    static func lines(_ e: TransferEvents) -> [String] {
        ["\(e.bundleIdentifier) session \(e.sessionIdentifier): \(e.results.count) transfer(s)"]
            + e.results.map { r in
                "  \(r.transferID) \(r.fileName) \(r.outcome) \(r.bytes) bytes" + (r.reason.map { " (\($0.rawValue))" } ?? "")
            }
    }

    static func json(_ e: TransferEvents) -> [String: Any] {
        [
            "bundleIdentifier": e.bundleIdentifier, "session": e.sessionIdentifier,
            "results": e.results.map { r in
                [
                    "id": Int(r.transferID), "fileName": r.fileName, "outcome": "\(r.outcome)", "bytes": Int(r.bytes),
                    "reason": r.reason.map(\.rawValue).jsonOrNull,
                ] as [String: Any]
            },
        ]
    }
}
