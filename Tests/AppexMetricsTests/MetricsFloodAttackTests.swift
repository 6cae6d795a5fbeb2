import AppexHostClient
import AppexMetrics
import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 30, finding 2, as it was found: a local uid with no rights in appexd (nobody)
/// opens more connections to the metrics port than the cap and pipelines thousands of
/// `GET /metrics` on each, reading nothing. appexd's memory stays where it was, and a normal
/// scrape is answered once the client has gone.
@Suite(.serialized) struct MetricsFloodAttackTests {
    static let nobody: UInt32 = 65534
    static let python = "/usr/bin/python3"

    /// The attacker: `connections` sockets with a small receive window, `requests` pipelined
    /// on each (given up after a second without progress), held for `hold` seconds, then
    /// all closed by exiting. Prints how many requests went out.
    static let client = """
        import socket, sys, time
        host, port, connections, requests, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
        data = b"GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" * requests
        held, sent = [], 0
        for _ in range(connections):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(1)
            try:
                s.connect((host, port))
                view = memoryview(data)
                while view:
                    n = s.send(view)
                    sent += n
                    view = view[n:]
            except OSError:
                pass
            held.append(s)
        print(sent, flush=True)
        time.sleep(hold)
        """

    /// VmRSS and VmHWM (peak) of `pid`, in bytes.
    static func memory(of pid: Int32) throws -> (resident: Int, peak: Int) {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func field(_ name: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }),
                let kB = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
            else { return 0 }
            return kB * 1024
        }
        return (field("VmRSS"), field("VmHWM"))
    }

    @Test(.requiresRoot("appexd needs root")) func pipelinedScrapesFromNobodyDoNotInflateAppexd() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.python), "the attack client is python3")
        let d = try MetricsDaemon()
        defer { d.cleanUp() }
        try d.start(metrics: "127.0.0.1:0")
        let address = try #require(d.metricsAddress, "no metrics-address file: \(d.log)")
        let pid = try #require(d.process?.processIdentifier)
        // One launch and request of the probe: its histograms make a scrape tens of KB, as
        // on a machine in use, so a few thousand answers are already many MB.
        let host = try HostClient.connect(socketPath: d.socket, identifier: "tests.metrics-flood")
        defer { host.close() }
        _ = try await host.install(path: try d.writeProbeBundle())
        _ = try await host.enable(MetricsDaemon.probeIdentifier)
        let outcome = try await host.beginRequest(
            bundleIdentifier: MetricsDaemon.probeIdentifier,
            items: [ExtensionItem(userInfo: ["probe.action": .string("echo")])])
        #expect(outcome.outcome == .completed)
        let first = try HTTPClient.request(address)
        #expect(first.status == 200)
        let before = try Self.memory(of: pid)

        // More connections than the cap. Requests enough that answering all of them unread
        // would hold three times the bound below beyond what the kernel's socket buffers take
        // (up to 4 MiB a connection), at most 20,000 on each (as found), and no more: were the
        // defence gone, the test would cost a few hundred MB, once.
        let bound = 64 << 20
        let connections = MetricsServerLimits.defaultMaximumConnections + 4
        let perConnection = min(20_000, (3 * bound / connections + 4 << 20) / max(first.body.utf8.count, 1) + 1)
        let colon = try #require(address.lastIndex(of: ":"))
        let attacker = Process()
        attacker.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        attacker.arguments = [
            "--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups", Self.python, "-c", Self.client,
            String(address[..<colon]), String(address[address.index(after: colon)...]),
            String(connections), String(perConnection), "4",
        ]
        let output = Pipe()
        attacker.standardOutput = output
        try attacker.run()
        // Bounded: a second per connection at most, then the hold.
        let deadline = Date().addingTimeInterval(Double(connections) + 30)
        while attacker.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if attacker.isRunning { kill(attacker.processIdentifier, SIGKILL) }
        attacker.waitUntilExit()
        let sent =
            Int(
                String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(attacker.terminationStatus == 0)
        // The attack happened: the requests went out (appexd's kernel buffers took them).
        let requestBytes = 34
        #expect(
            sent >= MetricsServerLimits.defaultMaximumConnections * perConnection * requestBytes,
            "only \(sent) bytes of requests were sent")

        // The client is gone: a normal scrape is answered, and appexd never grew much.
        let scrape = try HTTPClient.request(address)
        #expect(scrape.status == 200)
        let after = try Self.memory(of: pid)
        #expect(after.peak - before.resident < bound, "appexd went from \(before.resident >> 20) MiB to a peak of \(after.peak >> 20) MiB")
        #expect(after.resident - before.resident < bound)
        print(
            "metrics flood: \(connections) connections × \(perConnection) requests for \(first.body.utf8.count) bytes each;",
            "appexd \(before.resident >> 20) MiB before, peak \(after.peak >> 20) MiB, \(after.resident >> 20) MiB after")
    }
}
