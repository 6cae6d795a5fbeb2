import AppexCommandSupport
import AppexHostClient
import AppexRegistry
import AppexSupervisor
import ArgumentParser
import Foundation

/// `appex transfers`: the background transfers in the registry, newest first, read directly
/// like `appex report`; `appex transfers cancel` asks appexd to stop some (Docs/transfers.md).
struct TransfersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfers",
        abstract: "List background transfers: waiting, running and ended.",
        subcommands: [TransfersListCommand.self, TransfersCancelCommand.self, TransfersEventsCommand.self],
        defaultSubcommand: TransfersListCommand.self)
}

struct TransfersListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List background transfers, newest first.")
    @Argument(help: "Only this extension's.") var bundleIdentifier: String?
    @Flag(help: "One JSON array of transfers.") var json = false
    @Option(help: "Rows, newest first.") var limit = 200
    @Option(help: "State directory (default /var/lib/appex as root, $XDG_STATE_HOME/appex otherwise).") var stateDir: String?

    func run() async throws {
        let registry = try Registry(stateDirectory: stateDir ?? SupervisorOptions.defaultStateDirectory)
        let rows = try registry.transfers(bundleIdentifier: bundleIdentifier, limit: limit)
        if json {
            try JSONOutput.print(rows.map(Self.json))
            return
        }
        var table: [[String]] = []
        for r in rows {
            table.append([
                "\(r.id ?? 0)", r.bundleIdentifier, r.sessionIdentifier, r.kind,
                r.state.rawValue + (r.state.isOver && !r.delivered ? "*" : ""), "\(r.bytes)",
                r.httpStatus.map(String.init) ?? "-", r.appGroup + "/" + r.fileName, r.reason ?? "-",
            ])
        }
        if rows.isEmpty {
            print("no background transfers")
        } else {
            for line in TextTable.render(
                headers: ["ID", "EXTENSION", "SESSION", "KIND", "STATE", "BYTES", "STATUS", "FILE", "REASON"],
                rows: table, indent: "")
            { print(line) }
        }
        if rows.contains(where: { $0.state.isOver && !$0.delivered }) { print("* its session's events are not delivered yet") }
    }

    static func json(_ r: TransferRecord) -> [String: Any] {
        [
            "id": r.id ?? 0, "bundleIdentifier": r.bundleIdentifier, "session": r.sessionIdentifier, "kind": r.kind, "url": r.url,
            "method": r.method, "appGroup": r.appGroup, "fileName": r.fileName, "state": r.state.rawValue,
            "reason": r.reason.jsonOrNull, "message": r.message.jsonOrNull, "bytes": r.bytes, "httpStatus": r.httpStatus.jsonOrNull,
            "attempts": r.attempts, "delivered": r.delivered, "createdAt": ISO8601DateFormatter().string(from: r.createdAt),
            "endedAt": r.endedAt.map { ISO8601DateFormatter().string(from: $0) }.jsonOrNull,
        ]
    }
}

struct TransfersCancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel unfinished transfers: by id, extension or BUNDLE/SESSION.")
    @Argument(help: "A transfer id, a bundle identifier, or BUNDLE/SESSION.") var selector: String
    @Option(
        help: ArgumentHelp(
            "Cancel as this containing app's host: only its extensions' transfers.",
            discussion: "Needs a uid that speaks for the app (appexd.yaml `apps`); administrators need no --app."))
    var app: String?
    @OptionGroup var daemon: DaemonOptions

    func run() async throws {
        try await daemon.connected(as: app ?? "appex-cli") { client in try await client.cancelTransfers(selector) }
        print("cancelled: \(selector)")
    }
}
