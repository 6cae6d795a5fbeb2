import AppexHostClient
import AppexWire
import BenchSupport
import Histogram

#if canImport(Glibc)
import Glibc
#endif

/// What one throughput row measured: requests per second over the measured part, each
/// request's round trip, and the relay's (appexd's) CPU time per request.
struct ThroughputResult {
    var requestsPerSecond: Double
    var latency: Histogram<UInt64>
    var cpuPerRequest: Double
}

/// Many hosts at once against several running extensions: each host its own connection to a
/// real appexd, sending one request after the other (host i to extension i mod count), all
/// hosts starting the measured part together after their warm-up.
struct Throughput {
    let socket: String
    let appexd: ProcessReadings
    let extensions: [String]

    /// `onReaderThreads`: each host's task prefers its client's reader executor (as in the
    /// warm round trip).
    func measure(hosts: Int, perHost: Int, warmup: Int, onReaderThreads: Bool) async throws -> ThroughputResult {
        var clients: [HostClient] = []
        defer { clients.forEach { $0.close() } }
        for i in 0..<hosts {
            clients.append(try HostClient.connect(socketPath: socket, identifier: "dev.appex.bench.host\(i)"))
        }
        _ = try await run(clients, iterations: warmup, onReaderThreads: onReaderThreads)
        let cpu0 = appexd.cpuSeconds, t0 = now()
        let samples = try await run(clients, iterations: perHost, onReaderThreads: onReaderThreads)
        let seconds = Double(now() - t0) / 1e9, cpu = appexd.cpuSeconds - cpu0
        var h = newHistogram()
        for s in samples { h.record(s) }
        return ThroughputResult(
            requestsPerSecond: Double(samples.count) / seconds, latency: h,
            cpuPerRequest: cpu / Double(samples.count))
    }

    /// Every client sends `iterations` requests, one after the other, all clients at once.
    private func run(_ clients: [HostClient], iterations: Int, onReaderThreads: Bool) async throws -> [UInt64] {
        let items = [ExtensionItem(attributedContentText: "bench")]
        return try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for (i, client) in clients.enumerated() {
                let id = extensions[i % extensions.count]
                group.addTask(executorPreference: onReaderThreads ? client.readerExecutor : nil) {
                    var mine: [UInt64] = []
                    mine.reserveCapacity(iterations)
                    for _ in 0..<iterations {
                        let t0 = now()
                        let outcome = try await client.beginRequest(bundleIdentifier: id, items: items)
                        mine.append(now() - t0)
                        guard outcome.outcome == .completed else { fail("\(id): request ended \(outcome.message)") }
                    }
                    return mine
                }
            }
            var all: [UInt64] = []
            for try await some in group { all += some }
            return all
        }
    }
}

/// The floor scaled the same way: `relay-floor` with as many host processes, one relay, and a
/// worker per extension.
func relayFloorThroughput(
    _ executable: String, hosts: Int, workers: Int, perHost: Int, warmup: Int,
    request: Int, answer: Int
) -> ThroughputResult {
    let r = runRelayFloor(executable, ["\(perHost)", "\(request)", "\(answer)", "\(warmup)", "\(hosts)", "\(workers)"])
    let n = Double(r.samples.totalCount)
    guard r.seconds > 0, n > 0 else { fail("relay-floor printed no throughput line") }
    return ThroughputResult(requestsPerSecond: n / r.seconds, latency: r.samples, cpuPerRequest: r.relayCPU / n)
}

/// One table: per host count, the floor's row and Appex's, with Appex's ratios to the floor.
func printThroughput(_ rows: [(hosts: Int, floor: ThroughputResult, appex: ThroughputResult, pool: ThroughputResult)], extensions: Int) {
    print(
        "\nthroughput: N hosts at once, each sending one request after the other, to \(extensions) extensions (floor: N C hosts, 1 relay, \(extensions) workers)"
    )
    print(
        pad("", 30) + lpad("req/s", 9) + lpad("p50 µs", 9) + lpad("p99 µs", 9) + lpad("CPU µs/req", 12)
            + lpad("req/s × fl", 12) + lpad("p50 × fl", 10) + lpad("p99 × fl", 10) + lpad("CPU × fl", 10))
    func line(_ name: String, _ r: ThroughputResult, _ floor: ThroughputResult?) -> String {
        var s =
            pad(name, 30) + lpad(String(format: "%.0f", r.requestsPerSecond), 9)
            + lpad(micros(r.latency.valueAtPercentile(50)), 9) + lpad(micros(r.latency.valueAtPercentile(99)), 9)
            + lpad(String(format: "%.1f", r.cpuPerRequest * 1e6), 12)
        if let f = floor {
            func ratio(_ a: Double, _ b: Double) -> String { b > 0 ? String(format: "%.2f×", a / b) : "–" }
            s +=
                lpad(ratio(r.requestsPerSecond, f.requestsPerSecond), 12)
                + lpad(ratio(Double(r.latency.valueAtPercentile(50)), Double(f.latency.valueAtPercentile(50))), 10)
                + lpad(ratio(Double(r.latency.valueAtPercentile(99)), Double(f.latency.valueAtPercentile(99))), 10)
                + lpad(ratio(r.cpuPerRequest, f.cpuPerRequest), 10)
        }
        return s
    }
    for row in rows {
        print(line("\(row.hosts) hosts: floor (relay CPU)", row.floor, nil))
        print(line("\(row.hosts) hosts: appexd", row.appex, row.floor))
        print(line("\(row.hosts) hosts: appexd, pool", row.pool, row.floor))
    }
    print("   (appexd: each host's task on its client's reader thread; pool: on the cooperative pool, the default)")
}
