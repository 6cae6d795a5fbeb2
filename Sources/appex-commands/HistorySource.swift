import AppexHostClient
import AppexRegistry
import AppexSupervisor
import ArgumentParser
import Foundation

/// The state directory a history command (`kills`, `report`, `logs`) reads: the one given
/// with --state-dir, else the one the appexd at the socket says it uses (Status), else, when
/// no appexd answers, the default. Nothing is created: a directory without a database is
/// refused by name.
struct HistorySource {
    var stateDirectory: String
    /// Where it came from, for the line that says which records are shown.
    var origin: String

    var databasePath: String { stateDirectory + "/" + Registry.databaseName }

    static func resolve(stateDir: String?, socket: String?) async throws -> HistorySource {
        if let stateDir { return HistorySource(stateDirectory: stateDir, origin: "--state-dir") }
        let path = HostClient.socketPath(explicit: socket)
        do {
            let client = try HostClient.connect(socketPath: socket, identifier: "appex-cli")
            defer { client.close() }
            return HistorySource(stateDirectory: try await client.stateDirectory(), origin: "appexd at \(path)")
        } catch let e as HostClientError where e.kind == .socket {
            return HistorySource(
                stateDirectory: SupervisorOptions.defaultStateDirectory,
                origin: "the default: no appexd answers at \(path)")
        }
    }

    /// The registry, opened only when its database is there.
    func registry(command: String) throws -> Registry {
        guard FileManager.default.fileExists(atPath: databasePath) else {
            throw CommandFailure(.noInput, "\(command): no records at \(stateDirectory) (\(origin)): \(databasePath) does not exist")
        }
        return try Registry(stateDirectory: stateDirectory)
    }

    /// "records of DB (ORIGIN)", the line before the human output.
    var sourceLine: String { "records of \(databasePath) (\(origin))" }
}
