// launch-bench: launching a static `true` in Appex's full sandbox (cgroup + seccomp + mount,
// pid, ipc, uts and net namespaces + data dir + own uid) side by side with a bare
// posix_spawn of the same binary, `bwrap --unshare-all`, `crun run` and `firejail`, in one run.
// Target: Appex within 1.5× of bare and ≥ 4× faster than bwrap (p50).
//
//   make bench-launch        (or: cd Benchmarks && swift build -c release &&
//                             APPEX_SANDBOX_INIT=… .build/release/launch-bench [ITERATIONS])
//
// Needs root. Installs its peers (apt-get install bubblewrap crun firejail) when missing.
// Rows:
//   bare          posix_spawn + waitpid
//   bare, isolated           the same, each 150 ms after the previous one
//   appex launch  clone into the extension's sandbox → cgroup, uid, seccomp → execve → exit;
//                 its sandbox (namespaces + view + init), container and cgroup made beforehand
//                 (what the supervisor pays per launch of an extension it has launched before)
//   appex launch, isolated   the same, each launch 150 ms after the previous one (a cold
//                 launch outside a burst, where a `cgroup.procs` join would wait for an RCU
//                 grace period; the launcher joins through `tasks`, which does not)
//   appex run     ExtensionRun.run: container + uid + sandbox build + cgroup create + launch +
//                 wait + cgroup removal + sandbox teardown (a one-off `appex run`, in-process)
//   appex run (process)      the whole `appex run STATIC_TRUE --extension-point
//                 com.apple.widget-extension` command, spawned and waited for (env APPEX)
//   bwrap / crun / firejail: spawn of the tool + wait, each doing its own namespaces and mounts
import AppexPolicy
import AppexSandbox
import AppexStateDirectory
import BenchSupport
import CAppexLauncher
import CAppexLinux
import Foundation
import Histogram

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("launch-bench: \(message)\n".utf8))
    exit(1)
}

/// posix_spawn + wait4; returns the exit status. `usage`: the child's resource use (its CPU
/// time and page faults, with those of the descendants it waited for).
@discardableResult
func spawnAndWait(_ argv: [String], quiet: Bool = true, usage: UnsafeMutablePointer<rusage>? = nil) -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if quiet {
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }
    let cargs = argv.map { strdup($0) } + [nil]
    defer { cargs.forEach { free($0) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, argv[0], &actions, nil, cargs, environ)
    if rc != 0 { return -1 }
    var status: Int32 = 0
    var ru = rusage()
    while wait4(pid, &status, 0, &ru) < 0 && errno == EINTR {}
    usage?.pointee = ru
    return status
}

/// What one whole command cost the machine beyond its time: CPU (user + system) in µs and
/// minor page faults, from wait4.
struct CommandCost {
    var cpuMicros: [Int] = []
    var pageFaults: [Int] = []

    mutating func add(_ ru: rusage) {
        cpuMicros.append(
            Int(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1_000_000
                + Int(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec))
        pageFaults.append(Int(ru.ru_minflt + ru.ru_majflt))
    }

    var summary: String {
        func median(_ v: [Int]) -> Int { v.isEmpty ? 0 : v.sorted()[v.count / 2] }
        return "CPU \(median(cpuMicros)) µs, \(median(pageFaults)) page faults (p50 per run)"
    }
}

func which(_ tool: String) -> String? {
    for dir in ["/usr/bin", "/usr/sbin", "/bin", "/usr/local/bin"] where access(dir + "/" + tool, X_OK) == 0 {
        return dir + "/" + tool
    }
    return nil
}

// MARK: crun worker (re-exec'd under `unshare -m`): crun refuses this machine's hybrid
// cgroup layout while the cgroup2 mount is visible, so it is removed in a private namespace.
let args = CommandLine.arguments
if args.count == 4 && args[1] == "--crun-worker" {
    _ = umount2("/sys/fs/cgroup/unified", Int32(MNT_DETACH))
    let crun = which("crun")!
    let n = Int(args[3]) ?? 100
    for i in 0..<n {
        let t0 = now()
        let st = spawnAndWait([crun, "run", "--bundle", args[2], "appex-bench-\(getpid())-\(i)"])
        let t1 = now()
        let line = Array((st == 0 ? "\(t1 - t0)\n" : "error \(st)\n").utf8)
        _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
    exit(0)
}

guard geteuid() == 0 else { fail("needs root (namespaces, cgroups, uid switch)") }
let iterations = args.count > 1 ? max(10, Int(args[1]) ?? 200) : 200
let warmup = max(5, iterations / 10)
let isolatedLaunches = 30

// MARK: the static `true`
let work = FileManager.default.temporaryDirectory.appendingPathComponent("appex-launch-bench-\(getpid())").path
try? FileManager.default.createDirectory(atPath: work + "/rootfs", withIntermediateDirectories: true)
chmod(work, 0o755)
chmod(work + "/rootfs", 0o755)
defer { try? FileManager.default.removeItem(atPath: work) }
try! "int main(void) { return 0; }\n".write(toFile: work + "/true.c", atomically: true, encoding: .utf8)
let truePath = work + "/rootfs/true"
guard spawnAndWait(["/usr/bin/gcc", "-static", "-O2", "-o", truePath, work + "/true.c"], quiet: false) == 0 else {
    fail("gcc -static failed (apt-get install gcc libc6-dev)")
}

// MARK: peers
let missing = ["bwrap": "bubblewrap", "crun": "crun", "firejail": "firejail"].filter { which($0.key) == nil }
if !missing.isEmpty {
    print("installing peers: \(missing.values.sorted().joined(separator: " "))")
    _ = spawnAndWait(["/usr/bin/apt-get", "install", "-y", "-q"] + missing.values.sorted())
}

// MARK: measurements
struct Row {
    var name: String
    var histogram: Histogram<UInt64>
    var note: String
}
var rows: [Row] = []
/// CPU and page faults of the two whole commands, from the alternated rows.
var costLines: [String] = []

@MainActor func measure(_ name: String, note: String = "", _ body: () throws -> Void) rethrows {
    for _ in 0..<warmup { try body() }
    var h = newHistogram()
    for _ in 0..<iterations {
        let t0 = now()
        try body()
        _ = h.record(now() - t0)
    }
    rows.append(Row(name: name, histogram: h, note: note))
}

// Bare.
measure("bare posix_spawn") {
    guard spawnAndWait([truePath]) == 0 else { fail("bare true failed") }
}

// The floor of an isolated launch: on a VM an idle vCPU takes tens of µs to wake, and a launch
// 150 ms after the last one meets idle CPUs and cold caches, sandboxed or not.
do {
    var h = newHistogram()
    for _ in 0..<isolatedLaunches {
        usleep(150_000)
        let t0 = now()
        guard spawnAndWait([truePath]) == 0 else { fail("bare true failed") }
        _ = h.record(now() - t0)
    }
    rows.append(Row(name: "bare, isolated", histogram: h, note: "each 150 ms after the previous one (\(isolatedLaunches) spawns)"))
}

// Appex: the shipped share-extension policy, as `appex run --extension-point` would use it.
let policies: PolicySet
do { policies = try PolicyLocator.load() } catch { fail("cannot load the shipped policies: \(error)") }
let effective = EffectivePolicy(extensionPoint: "com.apple.share-services", in: policies)
let spec = SandboxSpec(executable: truePath, policy: effective, bundleIdentifier: "com.example.launch-bench")
let state = work + "/state"
let options = RunOptions(stateDirectory: state)

/// The extension's sandbox, built once as a supervisor keeps it between launches.
let sandbox: ExtensionSandbox
do {
    let store = ContainerStore(stateRoot: state)
    let container = try store.prepare(bundleIdentifier: spec.bundleIdentifier)
    sandbox = try ExtensionSandbox.create(spec: spec, container: container, store: store)
} catch {
    fail("cannot build the extension's sandbox: \(error)")
}

/// One sandboxed launch with its sandbox, cgroup and container made beforehand; returns
/// (spawn → exit, phases).
@MainActor func appexLaunch() throws -> (UInt64, LaunchPhases) {
    let run = ExtensionRun(spec: spec, options: options, sandbox: sandbox)
    defer { run.cleanup() }
    try run.prepare()
    guard var plan = run.plan else { fail("no plan") }
    let devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)
    defer { close(devnull) }
    plan.stdin = devnull
    let t0 = now()
    let p = try sandbox.launch(plan)
    var code: Int32 = 0, status: Int32 = 0
    _ = appex_wait_pidfd(p.pidfd, 0, &code, &status)
    let t1 = now()
    close(p.pidfd)
    guard code == CLD_EXITED && status == 0 else { fail("sandboxed true failed: code \(code) status \(status)") }
    return (t1 - t0, p.phases)
}

do {
    for _ in 0..<warmup { _ = try appexLaunch() }
    var h = newHistogram()
    var clone = newHistogram(), sandboxPhase = newHistogram(), exec = newHistogram(), exit = newHistogram()
    for _ in 0..<iterations {
        let (total, phases) = try appexLaunch()
        _ = h.record(total)
        _ = clone.record(phases.cloneNanos)
        _ = sandboxPhase.record(phases.sandboxNanos)
        _ = exec.record(phases.execNanos)
        _ = exit.record(total > phases.totalNanos ? total - phases.totalNanos : 0)
    }
    rows.append(Row(name: "appex launch", histogram: h, note: "full sandbox entered; sandbox, container, cgroup made beforehand"))
    rows.append(Row(name: "  clone phase", histogram: clone, note: "clone into the sandbox's pid namespace"))
    rows.append(Row(name: "  sandbox phase", histogram: sandboxPhase, note: "child: cgroup join, setns, stdio, limits, uid, seccomp"))
    rows.append(Row(name: "  exec phase", histogram: exec, note: "execve until the parent resumes"))
    rows.append(Row(name: "  run + exit", histogram: exit, note: "true runs, exits, is reaped"))

    // Isolated: what a cold launch meets when nothing else launched in the last 150 ms (most
    // launches outside a burst). The loop above measures bursts.
    var isolated = newHistogram(), isolatedSandbox = newHistogram()
    for _ in 0..<isolatedLaunches {
        usleep(150_000)
        let (total, phases) = try appexLaunch()
        _ = isolated.record(total)
        _ = isolatedSandbox.record(phases.sandboxNanos)
    }
    rows.append(Row(name: "appex launch, isolated", histogram: isolated, note: "each 150 ms after the previous one (\(isolatedLaunches) launches)"))
    rows.append(Row(name: "  sandbox phase", histogram: isolatedSandbox, note: "child: cgroup join (v1 `tasks`), setns, stdio, limits, uid, seccomp"))
} catch {
    fail("appex launch: \(error)")
}
sandbox.close()

do {
    try measure("appex run", note: "one-off: incl. sandbox build/teardown, cgroup create/remove") {
        let r = try ExtensionRun.run(spec, options: options)
        guard r.exitStatus == 0 else { fail("appex run of true: \(r)") }
    }
} catch {
    fail("appex run: \(error)")
}

// The whole command as people meet it: process start, argument parsing, policies (cached),
// container, sandbox build, cgroup, launch, teardown. APPEX: the release `appex` executable.
let appexArgv = ProcessInfo.processInfo.environment["APPEX"].map { appexPath in
    [appexPath, "run", truePath, "--extension-point", "com.apple.widget-extension", "--state-dir", state + "-cli"]
}
let bwrapArgv = which("bwrap").map { bwrap in
    [bwrap, "--unshare-all", "--ro-bind", work + "/rootfs", work + "/rootfs", "--dev", "/dev", "--proc", "/proc", truePath]
}

if let argv = appexArgv {
    guard spawnAndWait(argv) == 0 else { fail("\(argv.joined(separator: " ")) failed") }
    measure("appex run (process)", note: "the whole `appex run` command, as from a shell") {
        guard spawnAndWait(argv) == 0 else { fail("appex run failed") }
    }
} else {
    print("appex run (process): set APPEX to the release appex executable (make bench-launch does)")
}

if let argv = bwrapArgv {
    measure("bwrap --unshare-all") { _ = spawnAndWait(argv) }
} else {
    print("bwrap: not installed, skipped")
}

// The two whole commands again, alternated run by run: on a VM whose speed drifts over
// minutes, rows measured one after the other can differ by more than the builds do.
if let appexArgv, let bwrapArgv {
    var a = newHistogram(), b = newHistogram()
    var appexCost = CommandCost(), bwrapCost = CommandCost()
    var ruA = rusage(), ruB = rusage()
    for i in 0..<(warmup + iterations) {
        let t0 = now()
        guard spawnAndWait(appexArgv, usage: &ruA) == 0 else { fail("appex run failed") }
        let t1 = now()
        _ = spawnAndWait(bwrapArgv, usage: &ruB)
        let t2 = now()
        if i >= warmup {
            _ = a.record(t1 - t0)
            _ = b.record(t2 - t1)
            appexCost.add(ruA)
            bwrapCost.add(ruB)
        }
    }
    rows.append(Row(name: "appex run, alternated", histogram: a, note: "alternated run by run with the next row"))
    rows.append(Row(name: "bwrap, alternated", histogram: b, note: "alternated run by run with the row above"))
    costLines = ["appex run (process): \(appexCost.summary)", "bwrap --unshare-all: \(bwrapCost.summary)"]
}

if let crun = which("crun"), let unshare = which("unshare") {
    let bundle = work + "/crun"
    try? FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
    _ = spawnAndWait(["/bin/sh", "-c", "cd '\(bundle)' && rm -f config.json && '\(crun)' spec"])
    if let data = FileManager.default.contents(atPath: bundle + "/config.json"),
        var config = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    {
        var process = config["process"] as? [String: Any] ?? [:]
        process["args"] = ["/true"]
        process["terminal"] = false
        config["process"] = process
        config["root"] = ["path": work + "/rootfs", "readonly": true]
        let out = try JSONSerialization.data(withJSONObject: config, options: [.prettyPrinted])
        _ = FileManager.default.createFile(atPath: bundle + "/config.json", contents: out)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: unshare)
        p.arguments = [
            "-m", "--propagation", "private", CommandLine.arguments[0], "--crun-worker", bundle,
            String(iterations + warmup),
        ]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        var h = newHistogram()
        let lines = text.split(separator: "\n")
        var errors = 0
        for (i, line) in lines.enumerated() {
            if let v = UInt64(line) { if i >= warmup { _ = h.record(v) } } else { errors += 1 }
        }
        if errors > 0 || h.totalCount == 0 {
            print("crun: \(errors) failed runs (\(lines.first ?? "no output")), skipped")
        } else {
            rows.append(Row(name: "crun run", histogram: h, note: "in a private mount ns without cgroup2"))
        }
    } else {
        print("crun: could not write an OCI config, skipped")
    }
} else {
    print("crun: not installed, skipped")
}

if let firejail = which("firejail") {
    if spawnAndWait([firejail, "--quiet", "--noprofile", truePath]) == 0 {
        measure("firejail --noprofile") { _ = spawnAndWait([firejail, "--quiet", "--noprofile", truePath]) }
    } else {
        print("firejail: does not run here, skipped")
    }
} else {
    print("firejail: not installed, skipped")
}

// MARK: report
func us(_ ns: UInt64) -> String { String(format: "%.0f", Double(ns) / 1000) }
func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
let bare = Double(rows[0].histogram.valueAtPercentile(50))
print("launch-bench: static true, \(iterations) launches each (after \(warmup) warm-up), spawn → exit, µs")
print(pad("", 22) + lpad("p50", 8) + lpad("p90", 8) + lpad("p99", 8) + lpad("× bare", 9) + "  notes")
for r in rows {
    let h = r.histogram
    print(
        pad(r.name, 22) + lpad(us(h.valueAtPercentile(50)), 8) + lpad(us(h.valueAtPercentile(90)), 8)
            + lpad(us(h.valueAtPercentile(99)), 8) + lpad(String(format: "%.2f", Double(h.valueAtPercentile(50)) / bare), 9)
            + "  " + r.note)
}
let appex = rows.first { $0.name == "appex launch" }.map { Double($0.histogram.valueAtPercentile(50)) } ?? 0
print(String(format: "appex launch / bare = %.2f× (target ≤ 1.5×)", appex / bare))
if let bw = rows.first(where: { $0.name.hasPrefix("bwrap") }) {
    print(String(format: "bwrap / appex launch = %.2f× (target ≥ 4×)", Double(bw.histogram.valueAtPercentile(50)) / appex))
}
if let iso = rows.first(where: { $0.name == "appex launch, isolated" }) {
    let p50 = Double(iso.histogram.valueAtPercentile(50))
    // Issue 11's target compares like with like: an isolated launch against a bare spawn
    // isolated the same way, which meets the same idle vCPUs and cold caches (on this VM the
    // bare spawn alone is ~1.8× slower isolated than in a loop). Against the bare spawn in a
    // loop it is printed too, with that factor beside it.
    if let bareIso = rows.first(where: { $0.name == "bare, isolated" }) {
        let bareIsolated = Double(bareIso.histogram.valueAtPercentile(50))
        print(String(format: "appex launch, isolated / bare, isolated = %.2f× (target ≤ 2×, issue 11)", p50 / bareIsolated))
        print(
            String(format: "appex launch, isolated / bare in a loop = %.2f× (the bare spawn itself: %.2f× isolated)", p50 / bare, bareIsolated / bare)
        )
    } else {
        print(String(format: "appex launch, isolated / bare in a loop = %.2f×", p50 / bare))
    }
}
if let cli = rows.first(where: { $0.name == "appex run (process)" }) {
    let p50 = Double(cli.histogram.valueAtPercentile(50))
    print(String(format: "appex run (process) / bare = %.1f×", p50 / bare))
    if let bw = rows.first(where: { $0.name.hasPrefix("bwrap") }) {
        print(String(format: "appex run (process) / bwrap = %.2f× (target ≤ 1.0×, issue 11)", p50 / Double(bw.histogram.valueAtPercentile(50))))
    }
}
if let a = rows.first(where: { $0.name == "appex run, alternated" }), let b = rows.first(where: { $0.name == "bwrap, alternated" }) {
    print(
        String(
            format: "appex run (process) / bwrap, alternated = %.2f× (target ≤ 1.0×, issue 11)",
            Double(a.histogram.valueAtPercentile(50)) / Double(b.histogram.valueAtPercentile(50))))
}
costLines.forEach { print($0) }
