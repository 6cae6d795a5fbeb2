// load-bench: appexd under load and faults (issue 30, "Load and faults"). 64 hosts (one host
// uid, each its own connection) send 1,000 requests each, one after another, spread over eight
// extensions: four well-behaved, one slow, one crashing now and then, one hanging now and then,
// one that never answers a ping; meanwhile a uid that may do nothing keeps connections open
// without Hello, and a second host uid floods appexd with Pings (the probe cannot send any).
// Measured: that every request ends with an outcome, the well-behaved extensions' p50/p99
// against the same with one host and no load (before and after), and appexd's descriptors
// and memory before, at their peak (sampled every 100 ms) and after.
//
//   make bench-load [BENCH_ARGS="--requests N --hosts N --baseline N --no-flood --no-stranger --no-faults"]
//
// --no-flood, --no-stranger: without the ping flood, without the stranger (where the time goes).
// --no-faults: the control, the same hosts at the same pace with nothing misbehaving (the
// crashing, hanging and deaf extensions echo; no flood, no stranger; the slow one still sleeps).
// Needs root. Reads APPEXD (appexd) and APPEX_PROBE (appex-probe-extension), release builds.
// Exits 1 when a request has no outcome within 60 s.
import AppexHostClient
import BenchSupport
import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let withFlood = Behaviour.faults && !arguments.contains("--no-flood")
let withStranger = Behaviour.faults && !arguments.contains("--no-stranger")
let counts: [String: Int]
switch parseCounts(arguments.filter { !["--no-flood", "--no-stranger", "--no-faults"].contains($0) }, names: ["requests", "hosts", "baseline"]) {
case .success(let c): counts = c
case .failure(let e): fail(e.description)
}
let requestsPerHost = counts["requests"] ?? 1000, hostCount = counts["hosts"] ?? 64, baselineCount = counts["baseline"] ?? 2000
let hostUID: UInt32 = 4242, strangerUID: UInt32 = 4243, flooderUID: UInt32 = 4244
let deadline = Duration.seconds(60)
guard geteuid() == 0 else { fail("needs root: namespaces, cgroups, extension uids, a host uid") }
let env = ProcessInfo.processInfo.environment
guard let appexdPath = env["APPEXD"], let probePath = env["APPEX_PROBE"] else {
    fail("set APPEXD and APPEX_PROBE (make bench-load does)")
}

var template = Array("/tmp/appex-load-bench-XXXXXX".utf8CString)
guard let made = mkdtemp(&template) else { fail("mkdtemp") }
let root = String(cString: made)
chmod(root, 0o755)
cleanup.scratch = root

print("load-bench: \(machineLine())")
print(
    "  \(hostCount) hosts (uid \(hostUID)) × \(requestsPerHost) requests over \(Behaviour.allCases.count) extensions"
        + (withStranger ? "; stranger uid \(strangerUID) holding connections without Hello" : "; no stranger")
        + (withFlood ? "; host uid \(flooderUID) flooding Pings" : "; no ping flood")
        + (Behaviour.faults ? "" : "; CONTROL: no faults"))
let bundles = writeFleet(root: root, probe: probePath)
let daemon = Daemon(executable: appexdPath, root: root, hostUIDs: [hostUID, flooderUID], uids: "360000-360999")
let admin: HostClient
do {
    admin = try HostClient.connect(socketPath: daemon.socket, identifier: "load-admin")
    for behaviour in Behaviour.allCases {
        _ = try await admin.install(path: bundles[behaviour]!)
        _ = try await admin.enable(behaviour.bundleIdentifier)
    }
} catch { fail("installing the fleet: \(error)") }
await prewarm(admin, instances: 8)
try await Task.sleep(for: .seconds(1))

// Unloaded: one host of the same uid, nothing else.
let single = connectHosts(1, uid: hostUID, socket: daemon.socket)[0]
let loadBefore = MachineLoad()
let before = await unloaded(single, count: baselineCount)
let busyBefore = loadBefore.busy
single.close()
try await Task.sleep(for: .milliseconds(500))

// Loaded.
let descriptorsBefore = daemon.descriptorCount, memoryBefore = daemon.memory
let sampler = Sampler(daemon)
let stranger = withStranger ? Stranger(uid: strangerUID, socket: daemon.socket, root: root) : nil
cleanup.stranger = stranger
let flood = withFlood ? PingFlood(uid: flooderUID, socket: daemon.socket) : nil
try await Task.sleep(for: .seconds(1))
let hosts = connectHosts(hostCount, uid: hostUID, socket: daemon.socket)
let t0 = now(), cpu0 = daemon.cpuSeconds, loadLoaded = MachineLoad()
let samples = await withTaskGroup(of: [Sample].self) { group in
    for (i, client) in hosts.enumerated() {
        group.addTask { await runHost(client, index: i, requests: requestsPerHost, deadline: deadline) }
    }
    var all: [Sample] = []
    for await some in group { all += some }
    return all
}
let elapsed = Double(now() - t0) / 1e9, cpu = daemon.cpuSeconds - cpu0, busyLoaded = loadLoaded.busy
let flooded = flood?.finish()
let strangerCounts = stranger?.finish()
cleanup.stranger = nil
for client in hosts { client.close() }
let peak = sampler.stop()

// After: the hosts and the stranger gone, past the Hello deadline; unloaded again.
try await Task.sleep(for: .seconds(6))
let descriptorsAfter = daemon.descriptorCount, memoryAfter = daemon.memory
let single2 = connectHosts(1, uid: hostUID, socket: daemon.socket)[0]
let loadAfter = MachineLoad()
let after = await unloaded(single2, count: baselineCount)
let busyAfter = loadAfter.busy
single2.close()
admin.close()
let daemonPID = daemon.pid
cleanup.run()

print("")
print(
    String(
        format: "loaded run: %d requests in %.1f s (%.0f/s); appexd used %.1f CPU s (%.0f %% of one core)",
        samples.count, elapsed, Double(samples.count) / elapsed, cpu, cpu / elapsed * 100))
printOutcomes(samples)
let missing = samples.filter { $0.outcome == Sample.missing }.count
let wellBehaved = samples.filter { $0.behaviour.wellBehaved }
let loaded = wellBehaved.filter { $0.outcome == "completed" && !$0.cold }
print("")
print(
    "well-behaved extensions (echo0–3), warm completed requests, ms: as the host saw it | appexd's total | its round trip to the extension | queued")
printLatencies("unloaded, one host, before", before)
printLatencies("loaded, \(hostCount) hosts" + (Behaviour.faults ? " + faults" : ", no faults"), loaded, of: wellBehaved.count)
printLatencies("unloaded, one host, after", after)
printCrowding(loaded)
let p99Ratio = Double(histogram(loaded).valueAtPercentile(99)) / Double(max(histogram(before).valueAtPercentile(99), 1))
let p50Ratio = Double(histogram(loaded).valueAtPercentile(50)) / Double(max(histogram(before).valueAtPercentile(50), 1))
let p99RatioAfter = Double(histogram(loaded).valueAtPercentile(99)) / Double(max(histogram(after).valueAtPercentile(99), 1))
print(String(format: "  loaded / unloaded before: p50 %.2f×, p99 %.2f× (p99 / unloaded after: %.2f×)", p50Ratio, p99Ratio, p99RatioAfter))
print(
    String(
        format:
            "  the whole machine (all CPUs, other users' work included) was busy %.0f %% / %.0f %% / %.0f %% of the time (before / loaded / after)",
        busyBefore * 100, busyLoaded * 100, busyAfter * 100))
print("")
print("appexd (pid \(daemonPID))")
print("  descriptors  before \(descriptorsBefore)  peak \(peak.descriptors)  after \(descriptorsAfter)  (\(peak.samples) samples, 100 ms apart)")
print(
    "  resident     before \(mib(memoryBefore.resident)) MiB  peak \(mib(peak.resident)) MiB  after \(mib(memoryAfter.resident)) MiB  (VmHWM \(mib(memoryAfter.highWater)) MiB)"
)
if let s = strangerCounts {
    print(
        "stranger uid \(strangerUID): opened \(s.opened) connections (\(s.failed) connects failed), \(s.refused) closed by appexd within 1 s, \(s.expired) later; most held at once for ≥ 200 ms: \(s.held)"
    )
} else if withStranger {
    print("stranger uid \(strangerUID): NO REPORT (it died)")
}
if let flooded {
    print(
        "ping flood (host uid \(flooderUID), its own connection): \(flooded.pongs) Pongs, "
            + String(format: "%.0f/s", Double(flooded.pongs) / elapsed) + (flooded.problem.map { "; ENDED EARLY: \($0)" } ?? "")
            + (flooded.disconnected.map { "; disconnected by appexd: \($0)" } ?? ""))
}
print("")
print("targets")
func target(_ name: String, _ met: Bool) { print("  \(name): \(met ? "met" : "MISSED")") }
target("every request ends with an outcome (\(missing) without one within \(deadline))", missing == 0)
target("well-behaved p99 loaded ≤ 2× unloaded", p99Ratio <= 2)
if let s = strangerCounts { target("stranger holds ≤ 4 connections", s.held <= 4) }
exit(missing == 0 ? 0 : 1)
