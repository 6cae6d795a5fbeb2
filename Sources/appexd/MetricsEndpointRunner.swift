import AppexDaemon
import AppexMetrics
import AppexSupervisor
import Foundation
import Logging

/// appexd's `GET /metrics` (Docs/metrics.md) while it runs: the server, and the file
/// `<state>/metrics-address` that says where it listens (`HOST:PORT` and a newline), so that
/// whoever asked for port 0 (the tests, a supervisor of supervisors) can find the port the
/// kernel chose. The same address is logged at start.
final class MetricsEndpointRunner: Sendable {
    static let addressFileName = "metrics-address"

    let server: MetricsServer
    let addressFile: String

    private init(server: MetricsServer, addressFile: String) {
        self.server = server
        self.addressFile = addressFile
    }

    /// Binds the endpoint (a failure to bind is fatal: the configuration asked for it) and
    /// writes the address file.
    static func start(
        host: String, port: Int, backend: MetricsBackend, supervisor: Supervisor,
        stateDirectory: String, logger: Logger
    ) async throws -> MetricsEndpointRunner {
        let server: MetricsServer
        do {
            server = try await MetricsServer.start(
                host: host, port: port, supervisor: supervisor,
                collector: ScrapeCollector(registry: backend.registry))
        } catch {
            let endpoint = MetricsEndpoint.listen(host: host, port: port)
            // NIO's error names its own calls; people want to know the port is taken.
            if "\(error)".contains("Address already in use") {
                throw AppexdError(
                    "metrics: \(endpoint) is already in use by another program (another appexd?): "
                        + "give another with --metrics HOST:PORT, or turn the endpoint off with --metrics off")
            }
            throw AppexdError("metrics: cannot listen on \(endpoint): \(error) (--metrics off turns the endpoint off)")
        }
        let file = stateDirectory + "/" + addressFileName
        do {
            try Data((server.address + "\n").utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
        } catch {
            logger.warning("metrics: cannot write \(file): \(error)")
        }
        logger.notice("metrics: serving http://\(server.address)/metrics")
        return MetricsEndpointRunner(server: server, addressFile: file)
    }

    func stop() async {
        await server.stop()
        try? FileManager.default.removeItem(atPath: addressFile)
    }
}

struct AppexdError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
