// jetsam-bench: time from a memory threshold being crossed to the victim's death, Appex beside
// earlyoom, on the same load in the same run (Docs/jetsam.md, "Benchmark").
//
//   load      a bloater touches `step` KiB every `interval` µs (grow.h, one file for both sides),
//             logging the monotonic time and its growth at each step (earlyoom's side to a
//             shared file, the probe to a pipe: appexd forwards no writable file), so the
//             harness knows afterwards when the threshold was crossed. Death: its pidfd, polled.
//   Appex     appexd --memory-budget B --no-system-pressure; the victim is the probe extension
//             (`grow` action), launched afresh each trial. Threshold: Critical, 90 % of B, on
//             the parent cgroup's footprint; crossed when the growth plus the probe's footprint
//             at rest reaches it (nothing else is in the parent).
//   earlyoom  earlyoom -M (MemAvailable − the same growth) -s 100 -r 0 --prefer its name, started
//             per trial in a PID namespace of its own with the bloater (earlyoom-trial).
//             Threshold: its SIGTERM line on MemAvailable, which the rest of the machine moves
//             too, so the bloater logs MemAvailable after each step and grows until it is crossed.
//   Trials alternate between the sides; each starts growing after a random 0–100 ms pause.
//   Target: Appex p99 ≤ 50 ms for threshold-triggered kills.
//   PSI only  a second appexd with no budget and the system's PSI on; a stall confined to one
//             cgroup (psi-thrash); stall start → level Warning. Target: within one trigger window.
//
//   Crossings a third appexd under the same budget: `bystanders` idle probes hold a share each,
//             then a foreground probe grows past the critical line at the same pace; kills per
//             crossing and survivors, against the fewest the victim order allows. After each,
//             earlyoom on the same load (earlyoom-trial crossing), its line crossed after the
//             same growth: what it killed and who survives.
//
//   make bench-jetsam [BENCH_ARGS="--trials N --budget-mib N --step-kib N --interval-us N --psi-trials N
//                                  --crossings N --bystanders N"]
//
// Needs root. Reads APPEXD, APPEX_PROBE (release builds) and EARLYOOM (default
// /usr/bin/earlyoom); earlyoom-trial and psi-thrash are found beside this executable.
import BenchSupport
import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

let counts: [String: Int]
switch parseCounts(
    Array(CommandLine.arguments.dropFirst()), names: ["trials", "budget-mib", "step-kib", "interval-us", "psi-trials", "crossings", "bystanders"])
{
case .success(let c): counts = c
case .failure(let e): fail(e.description)
}
let trials = counts["trials"] ?? 30, budgetMiB = counts["budget-mib"] ?? 160
let stepKiB = counts["step-kib"] ?? 1024, intervalMicros = counts["interval-us"] ?? 2000
let psiTrials = counts["psi-trials"] ?? 10
let crossings = counts["crossings"] ?? 10, bystanderCount = counts["bystanders"] ?? 4
guard budgetMiB >= 32 else { fail("--budget-mib must be at least 32") }
guard geteuid() == 0 else { fail("needs root: namespaces, cgroups, extension uids") }
let env = ProcessInfo.processInfo.environment
guard let appexdPath = env["APPEXD"], let probePath = env["APPEX_PROBE"] else {
    fail("set APPEXD and APPEX_PROBE (make bench-jetsam does)")
}
let earlyoomPath = env["EARLYOOM"] ?? "/usr/bin/earlyoom"
guard FileManager.default.isExecutableFile(atPath: earlyoomPath) else { fail("no earlyoom at \(earlyoomPath) (apt-get install earlyoom)") }
let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path

/// A trial gives up this long after the growth starts; the bloater holds its memory longer.
let timeoutMilliseconds = 4000
/// Growth past the threshold before the bloater stops and holds. Appex: enough to be past the
/// line whatever the rounding, and under the budget's cgroup limit (the kernel must not act).
/// earlyoom: its line is on MemAvailable, which the rest of the machine moves by hundreds of
/// MiB, so the bloater goes on growing (at the same pace) until it is crossed.
let overshootMiB = 6, earlyoomOvershootMiB = 512

var template = Array("/tmp/appex-jetsam-bench-XXXXXX".utf8CString)
guard let made = mkdtemp(&template) else { fail("mkdtemp") }
let root = String(cString: made)
chmod(root, 0o755)
cleanups.append { [root] in try? FileManager.default.removeItem(atPath: root) }
let log = GrowLog(path: "/dev/shm/appex-jetsam-bench-\(getpid()).log")
cleanups.append { [log] in log.remove() }
// Interrupted: stop appexd and remove what was made (earlyoom-trial's namespace dies with it,
// at the latest when its trial times out).
let interrupts = [SIGINT, SIGTERM].map { s in
    signal(s, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: s, queue: .global())
    source.setEventHandler { fail("interrupted") }
    source.resume()
    return source
}

func plan(crossBytes: Int64, overshoot: Int = overshootMiB) -> GrowPlan {
    GrowPlan(
        stepKiB: stepKiB, intervalMicros: intervalMicros, capMiB: Int((crossBytes + (1 << 20) - 1) >> 20) + overshoot,
        holdMilliseconds: timeoutMilliseconds + 2000)
}

let earlyoom = EarlyoomSide(trialExecutable: here + "/earlyoom-trial", earlyoom: earlyoomPath)
let earlyoomVersion = earlyoom.version
let appex = await AppexSide(appexd: appexdPath, probe: probePath, root: root, budgetMiB: budgetMiB)
cleanups.append { [appex] in appex.stop() }

print("jetsam-bench: \(machineLine())")
print(
    "load: \(stepKiB) KiB every \(intervalMicros) µs (\(String(format: "%.0f", plan(crossBytes: 0).mibPerSecond)) MiB/s), "
        + "then held; \(trials) trials per side, alternating, each after a random 0–100 ms pause")
print(
    "Appex:    appexd --memory-budget \(budgetMiB)MiB --no-system-pressure (release); victim: the probe extension's grow action; "
        + "threshold: Critical at \(String(format: "%.1f", Double(appex.criticalLine) / 1_048_576)) MiB of footprint")
print(
    "earlyoom: \(earlyoomVersion) -M <MemAvailable − the same growth> -s 100 -r 0 --prefer '^jetsam-bloater$', "
        + "in its own PID namespace with the bloater (oom_score_adj 1000)")
print("")

var appexLatency = newHistogram(), earlyoomLatency = newHistogram(), decisionToDeath = newHistogram()
var appexOdd: [String] = [], earlyoomOdd: [String] = []
var appexTouch: [UInt64] = [], earlyoomTouch: [UInt64] = [], earlyoomGrown: [Int64] = []
var lastCross = appex.criticalLine - (2 << 20)
/// After each kill: how long until appexd's level read normal again; how often it did not in 5 s.
var backToNormal: [UInt64] = [], stuckAtWarning = 0

@MainActor func runAppex(measured: Bool) async throws {
    let t = try await appex.trial(plan: { plan(crossBytes: $0) }, timeoutMilliseconds: Int32(timeoutMilliseconds))
    lastCross = t.crossBytes
    guard measured else { return }
    if let b = t.backToNormal { backToNormal.append(b) } else { stuckAtWarning += 1 }
    appexTouch.append(t.meanTouch)
    switch t.result {
    case .killed(let latency): appexLatency.record(latency)
    case .early(let by): appexOdd.append(String(format: "killed %.1f ms before the growth crossed", Double(by) / 1e6))
    case .notKilled: appexOdd.append("not killed within \(timeoutMilliseconds) ms")
    }
    if let d = t.decisionToDeathMicros { decisionToDeath.record(d * 1000) }
}

@MainActor func runEarlyoom(measured: Bool) {
    let t = earlyoom.trial(
        log: log, plan: plan(crossBytes: lastCross, overshoot: earlyoomOvershootMiB), crossBytes: lastCross,
        timeoutMilliseconds: timeoutMilliseconds)
    guard measured else { return }
    earlyoomTouch.append(t.meanTouch)
    earlyoomGrown.append(t.grownKiB)
    switch t.result {
    case .killed(let latency): earlyoomLatency.record(latency)
    case .early(let by):
        earlyoomOdd.append(
            by == 0
                ? "MemAvailable was under earlyoom's line before the growth started (other processes)"
                : String(format: "killed %.1f ms before the log shows MemAvailable under the line", Double(by) / 1e6))
    case .notKilled: earlyoomOdd.append("not killed within \(timeoutMilliseconds) ms")
    }
}

do {
    // One unmeasured trial each: the first launch and the first earlyoom start warm caches.
    try await runAppex(measured: false)
    runEarlyoom(measured: false)
    for i in 0..<trials {
        if i % 2 == 0 {
            try await runAppex(measured: true)
            runEarlyoom(measured: true)
        } else {
            runEarlyoom(measured: true)
            try await runAppex(measured: true)
        }
        if (i + 1) % 10 == 0 { print("  \(i + 1)/\(trials) trials") }
    }
    try await appex.waitUntilQuiet()
} catch {
    fail("\(error)")
}
let causes = appex.criticalCauses()
appex.stop()

func ms(_ ns: UInt64) -> String { String(format: "%.1f", Double(ns) / 1e6) }
func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }

print(
    """

    threshold crossed → victim dead, ms. Crossed: Appex, the start of the step whose growth takes the
    parent's footprint to the critical line; earlyoom, the last MemAvailable reading above its line
    (taken after each step). Both are upper bounds, by at most one step.
    """)
print(pad("", 46) + lpad("n", 5) + lpad("p50", 8) + lpad("p90", 8) + lpad("p99", 8) + lpad("max", 8) + lpad("p50 ×eoom", 11) + lpad("p99 ×eoom", 11))
@MainActor func row(_ name: String, _ h: Histogram<UInt64>, ratios: Bool) {
    var line = pad(name, 46) + lpad("\(h.totalCount)", 5)
    for p in [50.0, 90, 99] { line += lpad(h.totalCount > 0 ? ms(h.valueAtPercentile(p)) : "-", 8) }
    line += lpad(h.totalCount > 0 ? ms(h.max) : "-", 8)
    if ratios, h.totalCount > 0, earlyoomLatency.totalCount > 0 {
        for p in [50.0, 99] {
            line += lpad(String(format: "%.2f×", Double(h.valueAtPercentile(p)) / Double(max(earlyoomLatency.valueAtPercentile(p), 1))), 11)
        }
    }
    print(line)
}
row("earlyoom \(earlyoomVersion.split(separator: " ").last ?? "")", earlyoomLatency, ratios: false)
row("Appex, budget thresholds", appexLatency, ratios: true)
row("   appexd's record: kill decision → death", decisionToDeath, ratios: false)
let touch = (appexTouch + earlyoomTouch).sorted()
if !touch.isEmpty {
    print("time to touch one step: \(String(format: "%.2f", Double(touch[touch.count / 2]) / 1e6)) ms (median of the trials' means)")
}
if !earlyoomGrown.isEmpty {
    let grown = earlyoomGrown.sorted()
    print(
        String(
            format:
                "earlyoom's bloater grew %.0f MiB before it died (median; %.0f–%.0f), against %.0f MiB planned: the rest of the machine moves MemAvailable",
            Double(grown[grown.count / 2]) / 1024, Double(grown.first ?? 0) / 1024, Double(grown.last ?? 0) / 1024, Double(lastCross) / 1_048_576))
}
for (side, odd) in [("Appex", appexOdd), ("earlyoom", earlyoomOdd)] where !odd.isEmpty {
    print("\(side), left out of the table (\(odd.count)):")
    for o in odd { print("   " + o) }
}
if !backToNormal.isEmpty || stuckAtWarning > 0 {
    let b = backToNormal.sorted()
    print(
        "appexd's level back to normal after a kill (polled every 25 ms): "
            + (b.isEmpty ? "" : "median \(ms(b[b.count / 2])) ms, max \(ms(b.last ?? 0)) ms")
            + (stuckAtWarning > 0 ? "; still at warning after 5 s: \(stuckAtWarning)×" : ""))
}
if !causes.isEmpty {
    print("what took appexd's governor to Critical:")
    for (cause, n) in causes.sorted(by: { $0.value > $1.value }) { print("   \(n)× \(cause)") }
}

// Kills per crossing: a third appexd; bystanders hold 60 % of the budget between them, the
// grower takes it to 100 % and holds (the arithmetic: one bystander). After each, earlyoom on
// the same load: as many plain bystanders holding as much, a foreground growing as fast to as
// much, its line crossed after the same growth as appexd's critical line was.
if crossings > 0 && bystanderCount > 0 {
    let side = await CrossingSide(appexd: appexdPath, probe: probePath, root: root, budgetMiB: budgetMiB, bystanders: bystanderCount)
    cleanups.append { [side] in side.stop() }
    let hold = max(1, budgetMiB * 60 / 100 / bystanderCount), grow = budgetMiB * 40 / 100
    var results: [CrossingSide.Crossing] = [], theirs: [EarlyoomSide.Crossing] = []
    do {
        for _ in 0..<crossings {
            let ours = try await side.crossing(holdMiB: hold, growMiB: grow, stepKiB: stepKiB, intervalMicros: intervalMicros)
            results.append(ours)
            theirs.append(
                earlyoom.crossing(
                    log: log, plan: GrowPlan(stepKiB: stepKiB, intervalMicros: intervalMicros, capMiB: grow, holdMilliseconds: 0),
                    crossBytes: ours.crossBytes, bystanders: bystanderCount, holdMiB: hold,
                    settleMilliseconds: CrossingSide.holdMilliseconds + CrossingSide.quietMilliseconds))
        }
    } catch { fail("crossings: \(error)") }
    side.stop()
    let members = bystanderCount + 1
    print(
        "\nkills per crossing (\(bystanderCount) idle bystanders holding \(hold) MiB each, a foreground growing to \(grow) MiB "
            + "at the same pace, budget \(budgetMiB) MiB), \(results.count) crossings a side, alternating:")
    let kills = results.map(\.kills), extra = zip(results.map(\.kills), results.map(\.fewest)).map { $0 - $1 }
    print(
        "   appexd kills per crossing: \(kills.map(String.init).joined(separator: " ")); the fewest the order allows: "
            + results.map { String($0.fewest) }.joined(separator: " "))
    print(
        "   kills beyond the fewest: \(extra.filter { $0 > 0 }.reduce(0, +)) in all; kernel kills: \(results.map(\.kernelKills).reduce(0, +)); "
            + "survivors per crossing: \(results.map { String($0.survivors) }.joined(separator: " ")) of \(members)")
    print(
        "   earlyoom, line at MemAvailable − \(String(format: "%.1f", Double(results.last?.crossBytes ?? 0) / 1_048_576)) MiB "
            + "(appexd's critical line less its footprint at rest), killed in order:")
    for (n, t) in theirs.enumerated() {
        print(
            "      \(n + 1): \(t.victims.isEmpty ? "nothing" : t.victims.joined(separator: ", ")); "
                + (t.crossed ? "" : "MemAvailable never reached the line; ")
                + String(
                    format: "the foreground grew %.0f MiB; MemAvailable's last reading %+.0f MiB from the line",
                    Double(t.foregroundGrownKiB) / 1024, Double(t.lastOverLineKiB) / 1024))
    }
    func mean(_ v: [Int]) -> String { v.isEmpty ? "-" : String(format: "%.1f", Double(v.reduce(0, +)) / Double(v.count)) }
    print("\n" + pad("", 24) + pad("kills per crossing", 36) + pad("survivors (of \(members))", 36) + "foreground killed")
    for (name, k, s, f) in [
        ("appexd", kills, results.map(\.survivors), results.filter(\.foregroundKilled).count),
        (
            "earlyoom \(earlyoomVersion.split(separator: " ").last ?? "")", theirs.map(\.victims.count),
            theirs.map(\.survivors), theirs.filter(\.foregroundKilled).count
        ),
    ] {
        print(
            pad(name, 24) + pad("mean \(mean(k)): " + k.map(String.init).joined(separator: " "), 36)
                + pad("mean \(mean(s)): " + s.map(String.init).joined(separator: " "), 36) + "\(f) of \(k.count)")
    }
    // MemAvailable is the whole machine's: where it never reached the line, earlyoom had no
    // crossing to answer. The same columns over the crossings where it did.
    let reached = theirs.filter(\.crossed)
    print(
        pad("  where MemAvailable", 24)
            + pad(
                "mean \(mean(reached.map(\.victims.count))): "
                    + reached.map { String($0.victims.count) }.joined(separator: " "), 36)
            + pad("mean \(mean(reached.map(\.survivors))): " + reached.map { String($0.survivors) }.joined(separator: " "), 36)
            + "\(reached.filter(\.foregroundKilled).count) of \(reached.count)")
    print("  reached its line (\(reached.count) of \(theirs.count))")
}

// PSI alone: a second appexd with no budget and the system's PSI on; a stall confined to a
// cgroup of its own (psi-thrash); ms from its start to appexd's level leaving normal.
var psiDetected: [UInt64] = [], psiOdd: [String] = [], psiWindow: Int?
if psiTrials > 0 {
    let psi = await PSISide(appexd: appexdPath, thrash: here + "/psi-thrash", root: root)
    do {
        for _ in 0..<psiTrials {
            let t = try await psi.trial()
            if let d = t.detected { psiDetected.append(d) } else if let n = t.note { psiOdd.append(n) }
        }
    } catch { fail("PSI trials: \(error)") }
    psiWindow = psi.windowMillis
    psi.stop()
    let d = psiDetected.sorted()
    print(
        "\nPSI only (appexd with no budget; a 100 ms stall within a \(psiWindow.map { "\($0) ms" } ?? "?") window, as armed): "
            + "stall start → level warning, ms, over \(d.count) trials")
    if !d.isEmpty {
        print("   p50 \(ms(d[d.count / 2]))  p90 \(ms(d[min(d.count - 1, d.count * 9 / 10)]))  max \(ms(d.last!))")
    }
    for o in psiOdd { print("   left out: " + o) }
}
print("\ntarget")
if appexLatency.totalCount > 0 {
    let p99 = appexLatency.valueAtPercentile(99)
    print("   Appex p99 ≤ 50 ms for threshold-triggered kills: \(ms(p99)) ms \(p99 <= 50_000_000 && appexOdd.isEmpty ? "met" : "MISSED")")
} else {
    print("   Appex p99 ≤ 50 ms for threshold-triggered kills: no kill measured: MISSED")
}
if psiTrials > 0 {
    let worst = psiDetected.max()
    // Trials another stall on the machine spoiled are left out (and listed above); most must count.
    let met = worst != nil && psiWindow != nil && worst! <= UInt64(psiWindow!) * 1_000_000 && psiDetected.count * 2 >= psiTrials
    print(
        "   PSI-only detection within one trigger window (\(psiWindow.map { "\($0) ms" } ?? "?")): "
            + "\(worst.map { "max \(ms($0)) ms" } ?? "nothing detected") \(met ? "met" : "MISSED")")
}
for c in cleanups.reversed() { c() }
