import AppexCgroups
import AppexHostClient
import AppexTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real `appexd` on a private state directory, socket, cgroup parent and uid range, with
/// a policy overlay for the tests' extension point (`dev.appex.tests.metrics`): notify for
/// `reboot`, kill for `swapon`, short timeouts. Its log goes to root/appexd.log.
final class MetricsDaemon: @unchecked Sendable {
    static let extensionPoint = "dev.appex.tests.metrics"
    static let probeIdentifier = "dev.appex.tests.metrics.probe"

    let root: String
    let socket: String
    let cgroupParent: String
    var process: Process?

    /// `memory`: the policy's `memory:` lines (indented), 32 MiB active hard limit by default.
    init(configuration: String = "hosts: []\nadmins: []\n", memory: [String] = ["  activeHardLimit: 32MiB"]) throws {
        root = try ScratchDirectory.make("appexd-metrics-test", mode: 0o755)
        socket = root + "/appexd.sock"
        cgroupParent = "appexd-metrics-tests-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: root + "/appexd.yaml"))
        let points = root + "/policies/extension-points"
        try FileManager.default.createDirectory(atPath: points, withIntermediateDirectories: true)
        let policy = """
            extensionPoints: [\(Self.extensionPoint)]
            title: Metrics tests
            memory:
            \(memory.joined(separator: "\n"))
            launchDeadline: 5s
            requestTimeout: 10s
            idleTimeout: 120s
            pingInterval: 1s
            unresponsiveTimeout: 5s
            syscalls:
              deny:
                - group: reboot
                  action: notify
                - group: swap
                  action: kill

            """
        try Data(policy.utf8).write(to: URL(fileURLWithPath: points + "/metrics-tests.yaml"))
    }

    var stateDirectory: String { root + "/state" }
    var log: String { (try? String(contentsOfFile: root + "/appexd.log", encoding: .utf8)) ?? "" }

    /// The log once it holds `text` (appexd logs its ready line just after it starts to
    /// answer, so a client can be quicker than the line); the log as it is after 10 s.
    func log(containing text: String) -> String {
        for _ in 0..<1000 {
            let now = log
            if now.contains(text) { return now }
            usleep(10_000)
        }
        return log
    }

    /// The address appexd wrote, once it is there.
    var metricsAddress: String? {
        (try? String(contentsOfFile: stateDirectory + "/metrics-address", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts appexd and waits until it answers a Hello on its socket; `metrics`: the
    /// `--metrics` argument (nil: none, the configuration decides).
    func start(metrics: String?, logLevel: String = "warning", extra: [String] = []) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: BuiltProducts.path("appexd"))
        p.arguments =
            [
                "--state-dir", stateDirectory, "--socket", socket, "--config", root + "/appexd.yaml",
                "--policies", root + "/policies", "--cgroup-parent", cgroupParent, "--log-level", logLevel,
                "--uid-range", "330000-330999",
                // Counts must follow what the test does, not the host's memory stalls
                // (other suites' extensions thrashing at their limits raise system PSI).
                "--no-system-pressure",
            ] + (metrics.map { ["--metrics", $0] } ?? []) + extra
        _ = FileManager.default.createFile(atPath: root + "/appexd.log", contents: nil)
        p.standardError = FileHandle(forWritingAtPath: root + "/appexd.log")
        try p.run()
        process = p
        let ready = HostClient.waitUntilServing(socketPath: socket, attempts: 500) { p.isRunning }
        try #require(ready, "appexd did not start answering: \(log)")
    }

    /// SIGTERM, and the exit status.
    @discardableResult
    func stop() -> Int32 {
        guard let p = process else { return -1 }
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        process = nil
        return p.terminationStatus
    }

    /// The probe extension in a bare bundle of the tests' extension point, at root/src.
    func writeProbeBundle(identifier: String = probeIdentifier) throws -> String {
        let bundle = root + "/src/\(identifier).appex"
        try BareBundle.write(
            at: bundle, executable: "probe", from: BuiltProducts.path("appex-probe-extension"),
            identifier: identifier, point: Self.extensionPoint)
        return bundle
    }

    func cleanUp() {
        if process != nil { stop() }
        if let manager = try? CgroupManager.detect(parentName: cgroupParent) {
            _ = try? manager.cleanupLeftovers()
            try? manager.removeParent()
        }
        try? ScratchDirectory.removeTree(root)
    }
}
