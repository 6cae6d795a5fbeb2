// supervisor-bench: the supervisor's two latencies, each beside its floor, in one run.
//
//   cold  spawn → check-in of the Swift examples (Widget, which also writes a counter file in
//         its container per request, and Action, a pure text transform; both on the SDK) and
//         the C one (HelloC),
//         under their shipped policies, through an embedded supervisor; split into the
//         sandbox's part (decision → exec) and the extension's own start-up (exec → Hello);
//         from a warm page cache and after dropping caches. Floor: the same executable
//         started bare (posix_spawn, no sandbox) until its Hello.
//         Target: p99 ≤ 50 ms warm-cache; far under the 1 s deadline cold-cache.
//   warm  request round trip host → appexd → extension → host with a small text item, through
//         a real appexd process and the host client. Floor: relay-floor, the same two hops
//         between three plain C processes over Unix sockets, records of the same sizes.
//         Each extension twice: the host's task on its client's reader thread
//         (HostClient.readerExecutor, where the answer arrives, as the floor's host waits in
//         recv) and in the cooperative pool (the default: one thread wake-up more).
//         Targets (issue 35): p50 ≤ 2.0× the floor (C), 2.5× (Swift SDK), 3× (Widget); p99 ≤ 3×
//         the floor's p99. Each row is split by the phases appexd reports in the outcome.
//   throughput  1, 8 and 64 hosts at once against the three extensions: requests/s, p50/p99 and
//         appexd's CPU per request (/proc/<pid>/stat utime+stime over the run), beside
//         relay-floor scaled the same way (N host processes, one relay, one worker per
//         extension). Target: with 64 hosts, ≥ 50 % of the floor's requests/s.
//
//   make bench-supervisor     (builds the examples, appexd and the sandbox init in release,
//                              then runs: supervisor-bench [--cold N] [--cold-cache N] [--warm N]
//                              [--throughput N], N the measured requests of each throughput row)
//
// Needs root (namespaces, cgroups, uids, drop_caches). Reads APPEX_EXAMPLES (the assembled
// ExampleHost.app), APPEXD (the appexd executable) and APPEX_SANDBOX_INIT.
import AppexHostClient
import AppexSupervisor
import BenchSupport
import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

let counts: [String: Int]
switch parseCounts(Array(CommandLine.arguments.dropFirst()), names: ["cold", "cold-cache", "warm", "throughput"]) {
case .success(let c): counts = c
case .failure(let e): fail(e.description)
}
let coldIterations = counts["cold"] ?? 200, coldCacheIterations = counts["cold-cache"] ?? 20
let warmIterations = counts["warm"] ?? 5000
let throughputRequests = counts["throughput"] ?? 6000
guard geteuid() == 0 else { fail("needs root: namespaces, cgroups, extension uids, drop_caches") }
guard let examples = ProcessInfo.processInfo.environment["APPEX_EXAMPLES"] else {
    fail("set APPEX_EXAMPLES to the assembled ExampleHost.app (make bench-supervisor does)")
}
guard let appexdPath = ProcessInfo.processInfo.environment["APPEXD"] else { fail("set APPEXD to the appexd executable (make bench-supervisor does)") }
let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
let relayFloorPath = here + "/relay-floor"

let extensions: [(name: String, id: String, executable: String)] = [
    ("Widget (Swift, SDK)", "dev.appex.examples.host.widget", examples + "/PlugIns/Widget.appex/widget"),
    ("Action (Swift, SDK)", "dev.appex.examples.host.action", examples + "/PlugIns/Action.appex/action"),
    ("HelloC (C, no SDK)", "dev.appex.examples.host.hello-c", examples + "/PlugIns/HelloC.appex/hello-c"),
]

var template = Array("/tmp/appex-supervisor-bench-XXXXXX".utf8CString)
guard let made = mkdtemp(&template) else { fail("mkdtemp") }
let root = String(cString: made)
chmod(root, 0o755)
defer { _ = try? FileManager.default.removeItem(atPath: root) }

print("supervisor-bench: \(machineLine())")
print("release build; examples from \(examples)")

// ---- cold --------------------------------------------------------------------------------------

let supervisor = try Supervisor(
    options: SupervisorOptions(
        stateDirectory: root + "/embedded-state", cgroupParent: "appex-bench-\(getpid())",
        terminateGrace: .milliseconds(500)), logger: quietLogger())
supervisor.start()
_ = try await supervisor.install(path: examples)
for e in extensions { _ = try await supervisor.enable(e.id) }

let cold = ColdLaunch(supervisor: supervisor)
var warmCacheRows: [Row] = [], coldCacheRows: [Row] = [], firstLaunches: [String] = []
for e in extensions {
    let bare = BareLaunch(executable: e.executable, bundleIdentifier: e.id, home: root, fail: fail)
    for _ in 0..<5 { _ = bare.once() }  // the page cache holds it, as it holds the sandboxed one
    var bareHistogram = newHistogram()
    for _ in 0..<coldIterations { bareHistogram.record(bare.once()) }

    // The first request builds the extension's sandbox (namespaces, view): one extra launch.
    let s = await cold.measure(e.id, iterations: coldIterations + 1, dropCachesFirst: false)
    if let first = s.first, let view = s.firstView {
        firstLaunches.append("\(e.name): \(micros(first)) µs to check-in, of which \(micros(view)) µs building the sandbox")
    }
    warmCacheRows += s.rows(e.name, floor: "\(e.name): bare spawn → Hello (floor)", bareHistogram)

    var bareDropped = newHistogram()
    for _ in 0..<coldCacheIterations {
        dropCaches()
        bareDropped.record(bare.once())
    }
    let d = await cold.measure(e.id, iterations: coldCacheIterations, dropCachesFirst: true)
    coldCacheRows += d.rows(e.name, floor: "\(e.name): bare, caches dropped (floor)", bareDropped)
}
await supervisor.shutdown()

printTable("cold launch, warm page cache: µs (a new process each time, in the sandbox kept since the first launch)", warmCacheRows)
print("first launch, which also builds the sandbox:")
for line in firstLaunches { print("   " + line) }
printTable("cold launch, caches dropped before each (sync; echo 3 > /proc/sys/vm/drop_caches): µs", coldCacheRows)

// ---- warm --------------------------------------------------------------------------------------

let appexd = try Appexd(executable: appexdPath, root: root)
var warmRows: [Row] = [], phaseRows: [Row] = []
var warmTargets: [(name: String, row: Row, floor: Row)] = []
var throughputRows: [(hosts: Int, floor: ThroughputResult, appex: ThroughputResult, pool: ThroughputResult)] = []
do {
    let client = try HostClient.connect(socketPath: appexd.socket, identifier: "dev.appex.bench.host")
    defer { client.close() }
    _ = try await client.install(path: examples)
    for e in extensions { _ = try await client.enable(e.id) }
    let warm = WarmRoundTrip(client: client)
    var sizes = (request: 0, answer: 0)
    var measured: [(String, Histogram<UInt64>, pool: Histogram<UInt64>)] = []
    for e in extensions {
        let (h, phases, request, answer) = try await warm.measure(e.id, iterations: warmIterations, warmup: 200, onReaderThread: true)
        let (pool, _, _, _) = try await warm.measure(e.id, iterations: warmIterations, warmup: 200, onReaderThread: false)
        measured.append((e.name, h, pool))
        phaseRows.append(Row(name: "\(e.name): in appexd, request in → outcome out", histogram: phases.inside))
        phaseRows.append(Row(name: "\(e.name): — of it BeginRequest out → answer in", histogram: phases.extensionLeg))
        sizes = (max(sizes.request, request), max(sizes.answer, answer))
    }
    let floor = relayFloor(relayFloorPath, iterations: warmIterations, request: sizes.request, answer: sizes.answer)
    let floorName = "floor: 3 C processes, \(sizes.request) B / \(sizes.answer) B records"
    warmRows.append(Row(name: floorName, histogram: floor))
    for (name, h, pool) in measured {
        let row = Row(name: "\(name): host → appexd → ext → host", histogram: h, floor: floorName)
        let poolRow = Row(name: "\(name): the same, host task in the pool", histogram: pool, floor: floorName)
        warmRows += [row, poolRow]
        warmTargets.append((name, row, warmRows[0]))
        warmTargets.append(("\(name), host task in the pool", poolRow, warmRows[0]))
    }

    let throughput = Throughput(
        socket: appexd.socket, appexd: ProcessReadings(pid: appexd.process.processIdentifier),
        extensions: extensions.map(\.id))
    for hosts in [1, 8, 64] {
        let perHost = max(throughputRequests / hosts, 1), warmup = max(200 / hosts, 5)
        let f = relayFloorThroughput(
            relayFloorPath, hosts: hosts, workers: extensions.count, perHost: perHost,
            warmup: warmup, request: sizes.request, answer: sizes.answer)
        let a = try await throughput.measure(hosts: hosts, perHost: perHost, warmup: warmup, onReaderThreads: true)
        let p = try await throughput.measure(hosts: hosts, perHost: perHost, warmup: warmup, onReaderThreads: false)
        throughputRows.append((hosts, f, a, p))
    }
} catch {
    appexd.stop()
    fail("warm round trip: \(error)")
}
appexd.stop()
printTable("warm request round trip, small text item: µs", warmRows)
printTable("where a warm round trip's time goes, from the phases appexd reports (µs resolution): µs", phaseRows)
printThroughput(throughputRows, extensions: extensions.count)

// ---- targets -----------------------------------------------------------------------------------

print("\ntargets")
for r in warmCacheRows where r.name.hasSuffix("spawn → check-in") {
    let p99 = Double(r.histogram.valueAtPercentile(99)) / 1e6
    print(String(format: "   cold p99 ≤ 50 ms (warm cache), %@: %.1f ms %@", r.name, p99, p99 <= 50 ? "met" : "MISSED"))
}
for r in coldCacheRows where r.name.hasSuffix("spawn → check-in") {
    let p99 = Double(r.histogram.valueAtPercentile(99)) / 1e6
    print(String(format: "   cold-cache p99 under the 1 s deadline, %@: %.1f ms %@", r.name, p99, p99 < 1000 ? "met" : "MISSED"))
}
for (name, row, floor) in warmTargets {
    // Issue 35: the C extension ≤ 2.0×, the Swift SDK ≤ 2.5×, Widget (which writes a file per
    // request) ≤ 3×; every p99 ≤ 3× the floor's p99.
    let limit = name.hasPrefix("Widget") ? 3.0 : name.contains("Swift") ? 2.5 : 2.0
    let ratio = row.p50 / floor.p50, tail = row.p99 / floor.p99
    print(String(format: "   warm p50 ≤ %.1f× floor, %@: %.0f µs, %.2f× %@", limit, name, row.p50 / 1000, ratio, ratio <= limit ? "met" : "MISSED"))
    print(String(format: "   warm p99 ≤ 3× floor p99, %@: %.0f µs, %.2f× %@", name, row.p99 / 1000, tail, tail <= 3 ? "met" : "MISSED"))
}
if let row = throughputRows.first(where: { $0.hosts == 64 }) {
    for (label, r) in [("", row.appex), (", host tasks in the pool", row.pool)] {
        let share = r.requestsPerSecond / row.floor.requestsPerSecond
        print(
            String(
                format: "   64 hosts ≥ 50 %% of the floor's requests/s%@: %.0f of %.0f, %.0f %% %@", label, r.requestsPerSecond,
                row.floor.requestsPerSecond, share * 100, share >= 0.5 ? "met" : "MISSED"))
    }
}
