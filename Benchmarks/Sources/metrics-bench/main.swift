// metrics-bench: appexd carrying many live, idle extensions (the smallest there is: the C
// probe), beside the same appexd carrying almost none.
//
//   scrape   GET /metrics on a new loopback connection, as Prometheus makes it. Target ≤ 5 ms p50.
//            Also right after launches of their own: a scrape that can reuse nothing.
//   memory   appexd's resident memory (VmRSS). Target ≤ 64 MiB.
//   idle CPU appexd's CPU time over 30 s (one idle ping interval) with every extension idle.
//            Target ≤ 1 % of one core.
//   launch   spawn → check-in of one more extension (its first launch) with all of them
//            running, against the same in a second appexd carrying none, started beside it:
//            first launches alternate between the two one by one (--pairs of them), so both
//            meet the machine in the same seconds. Target ≤ 1.1×. appexd runs with
//            --prebuild-sandboxes, as Docs/deployment.md advises for this: each extension's
//            sandbox is built when it is enabled, and the benchmark waits for those builds
//            before it launches. Also measured one side after the other (before the crowd, in
//            it, after it has left), each launch beside a bare start of the probe that shows
//            the machine's own drift between the sides.
//            --build-on-launch: appexd without the option, the first launch builds the sandbox.
//
//   make bench-metrics [BENCH_ARGS="--extensions N --scrapes N --launches N --pairs N --no-control --build-on-launch"]
//
//   Unless --no-control, it then builds the same crowd under an appexd with --metrics off and
//   measures the crowded launch there too, interleaved with a twin whose metrics are off as
//   well: whether the metrics themselves show in a launch.
//
// Needs root. Reads APPEXD (appexd) and APPEX_PROBE (appex-probe-extension), release builds.
import AppexHostClient
import AppexWire
import BenchSupport
import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

let counts: [String: Int]
let arguments = Array(CommandLine.arguments.dropFirst())
switch parseCounts(arguments.filter { $0 != "--no-control" && $0 != "--build-on-launch" }, names: ["extensions", "scrapes", "launches", "pairs"]) {
case .success(let c): counts = c
case .failure(let e): fail(e.description)
}
let extensionCount = counts["extensions"] ?? 1000, scrapeCount = counts["scrapes"] ?? 200, launchCount = counts["launches"] ?? 20
// Interleaved pairs (the target): more than the sequential sides, since they are cheap (no
// quiet wait between them) and their p50s are what the target compares.
let pairCount = counts["pairs"] ?? 60
// Afterwards the same crowd under an appexd with its metrics off, for the crowded launch.
let control = !arguments.contains("--no-control")
let prebuild = !arguments.contains("--build-on-launch")
guard geteuid() == 0 else { fail("needs root: namespaces, cgroups, extension uids") }
let env = ProcessInfo.processInfo.environment
guard let appexdPath = env["APPEXD"], let probePath = env["APPEX_PROBE"] else {
    fail("set APPEXD and APPEX_PROBE (make bench-metrics does)")
}

var template = Array("/tmp/appex-metrics-bench-XXXXXX".utf8CString)
guard let made = mkdtemp(&template) else { fail("mkdtemp") }
let root = String(cString: made)
chmod(root, 0o755)
scratch = root

// Extensions that stay: an idle timeout longer than the run; the shipped defaults otherwise.
let point = "dev.appex.bench.metrics"
try FileManager.default.createDirectory(atPath: root + "/policies/extension-points", withIntermediateDirectories: true)
try "extensionPoints: [\(point)]\ntitle: Metrics benchmark\nidleTimeout: 1h\n"
    .write(toFile: root + "/policies/extension-points/bench.yaml", atomically: true, encoding: .utf8)

func bundle(_ id: String) -> String {
    let path = root + "/src/\(id).appex"
    if FileManager.default.fileExists(atPath: path + "/Info.plist") { return path }
    do {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: probePath, toPath: path + "/probe")
        try """
        <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>
        <key>CFBundleIdentifier</key><string>\(id)</string><key>CFBundleExecutable</key><string>probe</string>
        <key>CFBundlePackageType</key><string>XPC!</string><key>CFBundleVersion</key><string>1</string>
        <key>NSExtension</key><dict><key>NSExtensionPointIdentifier</key><string>\(point)</string></dict>
        </dict></plist>
        """.write(toFile: path + "/Info.plist", atomically: true, encoding: .utf8)
    } catch { fail("bundle \(id): \(error)") }
    chmod(root + "/src", 0o755)
    chmod(path, 0o755)
    return path
}

let before = (0..<launchCount).map { "dev.appex.bench.before\($0)" }
let fillers = (0..<extensionCount).map { "dev.appex.bench.idle\($0)" }
let after = (0..<launchCount).map { "dev.appex.bench.after\($0)" }
let churn = (0..<launchCount).map { "dev.appex.bench.churn\($0)" }
// Measured alone once more after the crowd has left: a drift of the machine over the run
// shows as the two alone sides differing, instead of as the crowd's cost.
let again = (0..<launchCount).map { "dev.appex.bench.again\($0)" }
// The interleaved sides: measured in the crowd, and in a second appexd carrying none.
let pairCrowded = (0..<pairCount).map { "dev.appex.bench.pair\($0)" }
let pairAlone = (0..<pairCount).map { "dev.appex.bench.twin\($0)" }
let all = before + fillers + after + churn + again + pairCrowded
// Two uids per extension (its own and its sandbox init's).
let uids = "340000-\(340000 + 2 * all.count + 100)"

print(
    "metrics-bench: \(extensionCount) idle extensions (C probe), \(scrapeCount) scrapes, \(launchCount) launches each side, \(pairCount) interleaved pairs, sandboxes \(prebuild ? "built ahead (--prebuild-sandboxes)" : "built by first launches")"
)
let daemon = Daemon(executable: appexdPath, root: root, policies: root + "/policies", uids: uids, prebuild: prebuild)
defer {
    daemon.stop()
    try? FileManager.default.removeItem(atPath: root)
}
let client = try HostClient.connect(socketPath: daemon.socket, identifier: "bench")

/// Installs and enables `ids` through `client`, with progress lines when `progress`.
func installAll(_ ids: [String], through client: HostClient, progress: Bool = false) async throws {
    let t0 = now()
    for (i, id) in ids.enumerated() {
        _ = try await client.install(path: bundle(id))
        _ = try await client.enable(id)
        if progress && (i + 1) % 250 == 0 { print("  installed \(i + 1)/\(ids.count) (\((now() - t0) / 1_000_000) ms)") }
    }
    if progress { print("  installing took \((now() - t0) / 1_000_000) ms") }
}

/// With sandboxes built ahead: waits until `count` sandbox inits run (the builds appexd
/// queued when the extensions were enabled), so that no launch measured waits behind one.
func waitForSandboxes(_ count: Int) async throws {
    guard prebuild else { return }
    let t0 = now()
    while sandboxInits() < count {
        if now() - t0 > 300_000_000_000 { fail("only \(sandboxInits()) of \(count) sandboxes built after 300 s") }
        try await Task.sleep(for: .milliseconds(200))
    }
}

/// Processes named appex-sandbox-init (the kernel keeps 15 characters of a name).
func sandboxInits() -> Int {
    let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return pids.reduce(0) { n, pid in
        guard pid.first?.isNumber == true,
            let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
        else { return n }
        return comm == "appex-sandbox-i\n" ? n + 1 : n
    }
}

/// appexd's sandbox builds so far, from its metrics: how many, and their total seconds.
func sandboxBuilds(_ address: String) -> (count: Double, seconds: Double) {
    let text = scrapeText(address)
    func value(_ name: String) -> Double {
        text.split(separator: "\n").filter { $0.hasPrefix(name + "{") && $0.contains("trigger=\"prebuild\"") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
    }
    return (value("appex_sandbox_build_duration_seconds_count"), value("appex_sandbox_build_duration_seconds_sum"))
}

/// The extension's first launch: spawn → check-in, µs, and every phase the outcome reports.
func launch(_ id: String, through client: HostClient = client) async throws -> (checkIn: UInt64, phases: [String: UInt64]) {
    let outcome = try await client.beginRequest(bundleIdentifier: id, items: [ExtensionItem(attributedContentText: "x")])
    guard outcome.outcome == .completed, outcome.cold else { fail("\(id): \(outcome.message)") }
    guard let checkIn = outcome.phases.first(where: { $0.name == "checkIn" })?.microseconds else { fail("\(id): no checkIn") }
    var phases: [String: UInt64] = [:]
    for p in outcome.phases { phases[p.name, default: 0] += p.microseconds }
    return (checkIn, phases)
}

/// What one side measured: spawn → check-in and each phase (name → durations) of the first
/// launches, and `bare`, the probe started bare (no appexd, no sandbox) until its Hello, one
/// before each launch: the machine's own speed in the same seconds.
struct Side {
    var checkIn = newHistogram()
    var phases: [String: Histogram<UInt64>] = [:]
    var bare = newHistogram()

    /// One launch's check-in and phases.
    mutating func record(_ launch: (checkIn: UInt64, phases: [String: UInt64])) {
        checkIn.record(launch.checkIn)
        for (k, v) in launch.phases { phases[k, default: newHistogram()].record(v) }
    }
}

let bareProbe = BareLaunch(executable: probePath, bundleIdentifier: "dev.appex.bench.bare", home: root, fail: fail)

/// First launches of `ids`, each after a bare start of the probe. Starts once the machine is
/// quiet (`waitForQuietMachine`), so that what came before (installs, builds, a scrape, the
/// kernel tearing down what left) has settled.
func measure(_ ids: [String], through client: HostClient = client) async throws -> Side {
    try await Task.sleep(for: .seconds(1))
    _ = try await waitForQuietMachine()
    var side = Side()
    for id in ids {
        side.bare.record(bareProbe.once() / 1000)
        side.record(try await launch(id, through: client))
    }
    return side
}

/// Launches `ids` (the crowd), with progress lines when `progress`.
func launchAll(_ ids: [String], through client: HostClient = client, progress: Bool = false) async throws {
    let t0 = now()
    for (i, id) in ids.enumerated() {
        _ = try await launch(id, through: client)
        if progress && (i + 1) % 250 == 0 { print("  launched \(i + 1)/\(ids.count) (\((now() - t0) / 1_000_000) ms)") }
    }
    if progress { print("  launching \(ids.count) took \((now() - t0) / 1_000_000) ms") }
}

// Alone: only the extensions measured are installed. Then the crowd; the extensions measured
// in it (and the churn's) are enabled once it runs.
try await installAll(before, through: client)
try await waitForSandboxes(before.count)
let buildsAlone = sandboxBuilds(daemon.metricsAddress)
let alone = try await measure(before)
try await installAll(fillers, through: client, progress: true)
try await waitForSandboxes(before.count + fillers.count)
try await launchAll(fillers, progress: true)
let buildsBeforeCrowd = sandboxBuilds(daemon.metricsAddress)
try await installAll(after + churn, through: client)
try await waitForSandboxes(before.count + fillers.count + after.count + churn.count)
let buildsCrowded = sandboxBuilds(daemon.metricsAddress)
let crowded = try await measure(after)
// A scrape right after each of these launches (not measured themselves): what one costs when
// something it shows changed (a new instance), so nothing of the last rendering can be reused.
var changedScrapes = newHistogram()
let address = daemon.metricsAddress
for id in churn {
    _ = try await launch(id)
    let s = now()
    _ = scrape(address)
    changedScrapes.record(now() - s)
}

// Idle: every instance has aged to its idle band (at most 5 s) before the CPU is counted, over
// one idle ping interval (30 s shipped): each instance is pinged once in it, and the footprint
// sampler makes three rounds. A shorter window held all of the crowd's pings or none of them.
try await Task.sleep(for: .seconds(6))
let cpu0 = daemon.cpuSeconds, wall0 = now()
try await Task.sleep(for: .seconds(30))
let idleCores = (daemon.cpuSeconds - cpu0) / (Double(now() - wall0) / 1e9)
let resident = daemon.residentBytes

var bytes = 0
for _ in 0..<5 { bytes = scrape(address) }
var scrapes = newHistogram()
for _ in 0..<scrapeCount {
    let s = now()
    bytes = scrape(address)
    scrapes.record(now() - s)
}
let residentAfter = daemon.residentBytes
let descriptors = daemon.descriptorCount, threads = daemon.threadCount

// Interleaved: a second appexd carrying nothing but the extensions it measures runs beside
// the one with the crowd, and first launches alternate between the two, one by one (the
// crowded side first in every other pair). Both sides meet the same machine in the same
// seconds, so what differs is what the crowded appexd carries: its instances, their timers
// and pings, the footprint sampler, the metrics. The sides measured one after the other
// (above) also hold the machine's drift between them, which on a small VM is larger than the
// target: the bare probe beside them moves by up to a half between sides.
let twinUIDBase = 340000 + 2 * all.count + 200

/// Interleaved first launches: `crowdedIDs` through `crowded` (the appexd with the crowd),
/// `aloneIDs` in a second appexd started here with the same metrics setting. `sandboxes`: the
/// sandbox inits running before (the wait for the new ones' builds counts on from there).
/// Returns both sides' launches (no bare starts: the two sides are each other's reference).
func interleaved(
    _ crowdedIDs: [String], through crowded: HostClient, beside aloneIDs: [String], metrics: Bool,
    sandboxes: Int
) async throws -> (crowded: Side, alone: Side) {
    let twin = Daemon(
        executable: appexdPath, root: root, policies: root + "/policies",
        uids: "\(twinUIDBase)-\(twinUIDBase + 2 * aloneIDs.count + 100)", metrics: metrics,
        name: metrics ? "twin" : "control-twin", prebuild: prebuild)
    defer {
        twin.stop()
        running.removeAll { $0 === twin }
    }
    let twinClient = try HostClient.connect(socketPath: twin.socket, identifier: "bench-twin")
    try await installAll(crowdedIDs, through: crowded)
    try await installAll(aloneIDs, through: twinClient)
    try await waitForSandboxes(sandboxes + crowdedIDs.count + aloneIDs.count)
    try await Task.sleep(for: .seconds(1))
    _ = try await waitForQuietMachine()
    var crowdedSide = Side(), aloneSide = Side()
    for i in 0..<min(crowdedIDs.count, aloneIDs.count) {
        let crowdedFirst = i % 2 == 0
        if crowdedFirst { crowdedSide.record(try await launch(crowdedIDs[i], through: crowded)) }
        aloneSide.record(try await launch(aloneIDs[i], through: twinClient))
        if !crowdedFirst { crowdedSide.record(try await launch(crowdedIDs[i], through: crowded)) }
    }
    return (crowdedSide, aloneSide)
}

let paired = try await interleaved(
    pairCrowded, through: client, beside: pairAlone, metrics: true,
    sandboxes: before.count + fillers.count + after.count + churn.count)

// The crowd leaves (disabled: its instances terminate, its sandboxes close); alone again.
let t0Leave = now()
for id in fillers { _ = try await client.disable(id) }
print("  the crowd left in \((now() - t0Leave) / 1_000_000) ms")
// The kernel tears the crowd's namespaces and cgroups down after they are gone (deferred
// work): the second alone side waits until the machine is quiet, or it measures that teardown.
try await Task.sleep(for: .seconds(1))
print(String(format: "  the kernel's teardown of the crowd kept the machine busy for %.1f s more", try await waitForQuietMachine()))
try await installAll(again, through: client)
try await waitForSandboxes(before.count + after.count + churn.count + pairCrowded.count + again.count)
let aloneAgain = try await measure(again)

// The control: the same crowd, appexd with `--metrics off`. Crowded launches with the metrics
// on against the same with them off say whether the metrics themselves are visible in a launch.
var controlCrowded: UInt64?, controlAlone: UInt64?, controlPaired: (crowded: Side, alone: Side)?
if control {
    daemon.stop()
    let quiet = Daemon(
        executable: appexdPath, root: root, policies: root + "/policies", uids: uids, metrics: false,
        name: "control", prebuild: prebuild)
    let quietClient = try HostClient.connect(socketPath: quiet.socket, identifier: "bench-control")
    try await installAll(before, through: quietClient)
    try await waitForSandboxes(before.count)
    controlAlone = try await measure(before, through: quietClient).checkIn.valueAtPercentile(50)
    try await installAll(fillers, through: quietClient)
    try await waitForSandboxes(before.count + fillers.count)
    try await launchAll(fillers, through: quietClient)
    try await installAll(after, through: quietClient)
    try await waitForSandboxes(before.count + fillers.count + after.count)
    controlCrowded = try await measure(after, through: quietClient).checkIn.valueAtPercentile(50)
    controlPaired = try await interleaved(
        pairCrowded, through: quietClient, beside: pairAlone, metrics: false,
        sandboxes: before.count + fillers.count + after.count)
    quiet.stop()
}

func ms(_ ns: UInt64) -> String { String(format: "%.2f", Double(ns) / 1e6) }
// Live while the scrapes, the memory and the idle CPU were measured.
let live = before.count + fillers.count + after.count + churn.count
let crowd = before.count + fillers.count
print("")
print("with \(live) live idle extensions")
print(
    "  scrape GET /metrics   p50 \(ms(scrapes.valueAtPercentile(50))) ms  p90 \(ms(scrapes.valueAtPercentile(90))) ms  max \(ms(scrapes.max)) ms  (\(bytes / 1024) KiB)"
)
print(
    "  scrape after a change p50 \(ms(changedScrapes.valueAtPercentile(50))) ms  max \(ms(changedScrapes.max)) ms  (a new instance each time, \(churn.count) scrapes)"
)
func mib(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }
print("  appexd resident       \(mib(resident)) MiB before the scrapes, \(mib(residentAfter)) MiB after")
print("  appexd idle CPU       \(String(format: "%.2f", idleCores * 100)) % of one core (30 s: one idle ping interval)")
print("  appexd holds          \(descriptors) descriptors, \(threads) threads")
func times(_ a: UInt64, _ b: UInt64) -> String { String(format: "%.2f×", Double(a) / Double(max(b, 1))) }
let pairedCrowded = paired.crowded.checkIn.valueAtPercentile(50), pairedAlone = paired.alone.checkIn.valueAtPercentile(50)
let pairedRatio = Double(pairedCrowded) / Double(max(pairedAlone, 1))
print("  first launch, spawn → check-in p50, interleaved one by one with a second appexd carrying none:")
print("    \(pairedCrowded) µs with \(crowd)+ running, \(pairedAlone) µs beside it with none: \(String(format: "%.2f", pairedRatio))×")
if let controlPaired {
    let c = controlPaired.crowded.checkIn.valueAtPercentile(50), a = controlPaired.alone.checkIn.valueAtPercentile(50)
    let controlRatio = Double(c) / Double(max(a, 1))
    print(
        "    the same with both appexds' metrics off (control): \(c) µs / \(a) µs: \(String(format: "%.2f", controlRatio))×; the metrics' share of the crowd's cost: \(String(format: "%.2f", pairedRatio / controlRatio))×"
    )
}
print("    phases p50, µs (beside it with none → with the crowd):")
for name in paired.alone.phases.keys.sorted() {
    let crowdedP50 = paired.crowded.phases[name].map { String($0.valueAtPercentile(50)) } ?? "-"
    print("      \(name.padding(toLength: 14, withPad: " ", startingAt: 0)) \(paired.alone.phases[name]!.valueAtPercentile(50)) → \(crowdedP50)")
}
let p50Alone = alone.checkIn.valueAtPercentile(50), p50Crowded = crowded.checkIn.valueAtPercentile(50)
let p50AloneAgain = aloneAgain.checkIn.valueAtPercentile(50)
// Against both alone sides: the crowd's cost, not the machine's drift between them.
let ratio = Double(p50Crowded) / max(Double(p50Alone + p50AloneAgain) / 2, 1)
print("  the same measured one side after the other (the machine's drift included):")
print(
    "    \(p50Alone) µs with ≤ \(launchCount - 1) running, \(p50Crowded) µs with \(crowd)+ running, \(p50AloneAgain) µs alone again after the crowd left: \(String(format: "%.2f", ratio))× (crowded / the two alone sides' mean; \(times(p50Crowded, p50Alone)) the first)"
)
let bare = [alone, crowded, aloneAgain].map { $0.bare.valueAtPercentile(50) }
print(
    "    the probe started bare (no appexd, no sandbox) until its Hello, in the same seconds: \(bare[0]) / \(bare[1]) / \(bare[2]) µs (\(String(format: "%.2f", Double(bare[1]) / max(Double(bare[0] + bare[2]) / 2, 1)))×)"
)
if prebuild {
    let alone = buildsAlone.count > 0 ? buildsAlone.seconds / buildsAlone.count : 0
    let n = buildsCrowded.count - buildsBeforeCrowd.count
    let crowded = n > 0 ? (buildsCrowded.seconds - buildsBeforeCrowd.seconds) / n : 0
    print(
        String(
            format: "  sandbox builds, ahead of launch (off its path): mean %.2f ms alone (%.0f), %.2f ms with the crowd running (%.0f): %.2f×",
            alone * 1000, buildsAlone.count, crowded * 1000, n, crowded / max(alone, 1e-9)))
}
if let controlCrowded, let controlAlone {
    print(
        "  control, metrics off: first launch p50 \(controlAlone) µs alone, \(controlCrowded) µs with \(crowd)+ running: \(String(format: "%.2f", Double(controlCrowded) / Double(max(controlAlone, 1))))×; crowded with metrics on / off: \(String(format: "%.2f", Double(p50Crowded) / Double(max(controlCrowded, 1))))×"
    )
}
print("")
print("targets")
func target(_ name: String, _ met: Bool) { print("  \(name): \(met ? "met" : "MISSED")") }
target("scrape p50 ≤ 5 ms", scrapes.valueAtPercentile(50) <= 5_000_000)
target("appexd resident ≤ 64 MiB", max(resident, residentAfter) <= 64 << 20)
target("idle CPU ≤ 1 % of one core", idleCores <= 0.01)
target("launch with \(crowd) running ≤ 1.1× with none (interleaved with a second appexd)", pairedRatio <= 1.1)
