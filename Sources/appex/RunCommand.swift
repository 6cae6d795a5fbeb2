import AppexBundle
import AppexPolicy
import AppexSandbox
import ArgumentParser
import Foundation

/// `appex run BUNDLE [-- ARGS]`: one extension under its effective policy, to its exit.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run an extension in its sandbox and report its exit, kill reason, peak memory and launch phases.",
        discussion: """
            The extension runs in its own cgroup (memory and pids limits), mount, pid, ipc, uts \
            (and, unless its policy grants the network, net) namespaces, as its own uid, with its \
            policy's seccomp filter. Its stdout and stderr go to <state>/logs/<bundle-id>.log. \
            Needs root. See Docs/security-model.md and Docs/launch-sequence.md.
            """)

    @Argument(help: "An .appex bundle directory, or an executable with --extension-point.")
    var bundle: String

    @Argument(parsing: .postTerminator, help: "Arguments for the extension (after --).")
    var arguments: [String] = []

    @Flag(help: "Print one JSON object: exitStatus, signal, killReason, peakMemoryBytes, phases (µs), …")
    var json = false

    @Option(name: .customLong("extension-point"), help: "Run under this extension point's policy (required for a bare executable).")
    var extensionPoint: String?

    @Option(name: .customLong("policy-dir"), help: "A directory of policy files layered over the shipped ones (repeatable).")
    var policyDirs: [String] = []

    @Option(name: .customLong("state-dir"), help: "State root: containers, uids, logs.")
    var stateDir = RunRequest.defaultStateDir

    @Option(name: .customLong("uid-range"), help: ArgumentHelp(
        "Host uids and gids Appex gives extensions and their sandboxes, START-END.",
        discussion: "Checked against /etc/passwd, /etc/group, /etc/subuid and /etc/subgid: an overlap is refused."))
    var uidRange = RunRequest.defaultUIDRange

    @Option(help: "Kill the extension after this many seconds (kill reason run-timeout).")
    var timeout: Double?

    @Option(help: ArgumentHelp(
        "Launch it this many times, one after another, into one sandbox, as a supervisor does.",
        discussion: "The first launch builds the extension's sandbox (phase view), later ones only enter it. With --json, more than one launch prints an array of reports."))
    var launches = 1

    func run() throws {
        try request.execute()
    }

    /// The parsed options as plain values.
    var request: RunRequest {
        RunRequest(bundle: bundle, arguments: arguments, json: json, extensionPoint: extensionPoint,
                   policyDirs: policyDirs, stateDir: stateDir, uidRange: uidRange, timeout: timeout, launches: launches)
    }

    /// `count` launches into one sandbox built for them; the first report carries its build
    /// time as `view`, counted inside its `prepare` as for a single run (Docs/launch-sequence.md).
    static func repeatedLaunches(_ spec: SandboxSpec, options: RunOptions, count: Int) throws -> [RunReport] {
        let store = ContainerStore(stateRoot: options.stateDirectory, uidRange: options.uidRange)
        let container = try store.prepare(bundleIdentifier: spec.bundleIdentifier, appGroups: spec.appGroups)
        let sandbox = try ExtensionSandbox.create(spec: spec, container: container, store: store,
                                                  isolateNetwork: options.isolateNetwork,
                                                  preparedNetwork: options.preparedNetwork)
        defer { sandbox.close() }
        var reports = try (0..<count).map { _ in try ExtensionRun.run(spec, options: options, sandbox: sandbox) }
        let view = Int64(sandbox.buildNanos / 1000)
        reports[0].phases["view"] = view
        reports[0].phases["prepare", default: 0] += view
        return reports
    }

    static func jsonObject(_ r: RunReport, spec: SandboxSpec, extensionPoint: String) -> [String: Any] {
        [
            "bundleIdentifier": r.bundleIdentifier,
            "extensionPoint": extensionPoint,
            "pid": Int(r.pid),
            "uid": Int(r.uid),
            "cgroup": r.cgroup,
            "exitStatus": r.exitStatus.map { Int($0) }.jsonOrNull,
            "signal": r.signal.map { Int($0) }.jsonOrNull,
            "killReason": r.killReason.jsonOrNull,
            "peakMemoryBytes": r.peakMemoryBytes.map { Int($0) }.jsonOrNull,
            "memoryLimitBytes": spec.memoryMax.map { Int($0) }.jsonOrNull,
            "oomKills": r.oomKills,
            "phases": r.phases.mapValues { Int($0) },
            "deniedSyscalls": r.deniedSyscalls.map { ["syscall": $0.syscall, "count": $0.count] as [String: Any] },
            "logPath": r.logPath,
        ]
    }

    static func humanReport(_ r: RunReport, spec: SandboxSpec, extensionPoint: String) -> String {
        var lines: [String] = []
        var outcome: String
        if let s = r.exitStatus {
            outcome = "exited with status \(s)"
        } else if let sig = r.signal {
            outcome = "killed by signal \(sig)" + (signalName(sig).map { " (\($0))" } ?? "")
        } else {
            outcome = "ended"
        }
        if let reason = r.killReason { outcome += ", kill reason \(reason)" }
        lines.append("\(r.bundleIdentifier) [\(extensionPoint)] pid \(r.pid) uid \(r.uid): \(outcome)")
        let limit = spec.memoryMax.map { " of \(mib($0)) limit" } ?? ""
        lines.append("  peak memory: \(r.peakMemoryBytes.map(mib) ?? "unknown")\(limit)")
        let p = r.phases
        func us(_ k: String) -> String { p[k].map { "\($0) µs" } ?? "-" }
        let view = p["view"].map { _ in " (of which sandbox build \(us("view")))" } ?? ""
        lines.append("  launch: clone \(us("clone")), sandbox \(us("sandbox")), exec \(us("exec")) = \(us("launch")); prepare \(us("prepare"))\(view), run \(us("run"))")
        if !r.deniedSyscalls.isEmpty {
            lines.append("  denied: " + r.deniedSyscalls.map { "\($0.syscall) ×\($0.count)" }.joined(separator: ", "))
        }
        lines.append("  log: \(r.logPath)")
        return lines.newlineJoined
    }

    /// One decimal, rounded as `%.1f` would; not `String(format:)`, whose first use in a
    /// process costs ~0.4 ms of runtime type lookups, on every `appex run`.
    static func mib(_ bytes: Int64) -> String {
        let tenths = (max(bytes, 0) * 10 + 524_288) / 1_048_576
        return "\(tenths / 10).\(tenths % 10) MiB"
    }

    static func signalName(_ s: Int32) -> String? {
        [9: "SIGKILL", 31: "SIGSYS", 11: "SIGSEGV", 6: "SIGABRT", 15: "SIGTERM", 7: "SIGBUS", 4: "SIGILL", 8: "SIGFPE"][s]
    }
}

extension RunRequest {
    /// The thread that makes the sandbox's network namespace on the other CPU while this one
    /// reads the command line and the policy (PreparedNetworkNamespace). Its namespace is
    /// closed unused if the policy grants the host network.
    static func startHelper() -> PreparedNetworkNamespace {
        PreparedNetworkNamespace.start()
    }

    /// `appex run`'s work, on options parsed by argument-parser (`RunCommand.run()`) or by
    /// `RunRequest.parseCommon` (AppexMain's fast path for the common shapes). `helper`: one
    /// `startHelper()` started earlier (AppexMain); nil starts it here.
    func execute(helper: PreparedNetworkNamespace? = nil) throws {
        let network = helper ?? Self.startHelper()
        // stat, not FileManager (its first use is ~40 µs of every run).
        var st = stat()
        guard stat(bundle, &st) == 0 else {
            throw ValidationError("\(bundle): no such file or directory")
        }
        // The extension point first, then only its policy (PolicyLocator.load(only:)): the
        // cache's other policies are not decoded.
        let spec: SandboxSpec
        let point: String
        if st.st_mode & S_IFMT == S_IFDIR {
            let loaded = try ExtensionBundle.load(path: bundle)
            guard let p = extensionPoint ?? loaded.info.extensionInfo?.pointIdentifier else {
                throw ValidationError("\(bundle) declares no NSExtensionPointIdentifier; pass --extension-point")
            }
            let policies = try PolicyLocator.load(overlays: policyDirs, only: p)
            point = p
            spec = try SandboxSpec(bundle: loaded, policy: EffectivePolicy(extensionPoint: p, entitlements: loaded.entitlements, in: policies),
                                   arguments: arguments)
        } else {
            guard let extensionPoint else {
                throw ValidationError("\(bundle) is not a bundle directory; pass --extension-point to run a bare executable")
            }
            let policies = try PolicyLocator.load(overlays: policyDirs, only: extensionPoint)
            let path = AbsolutePath.of(bundle)
            point = extensionPoint
            spec = SandboxSpec(executable: path, policy: EffectivePolicy(extensionPoint: extensionPoint, in: policies),
                               arguments: arguments)
        }
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be a positive number of seconds") }
        guard launches >= 1 else { throw ValidationError("--launches must be at least 1") }
        guard let uids = UIDRangeCheck.parse(uidRange) else {
            throw ValidationError("--uid-range must be START-END with 1000 <= START <= END, not \"\(uidRange)\"")
        }

        var options = RunOptions(stateDirectory: AbsolutePath.of(stateDir),
                                 timeout: timeout.map { .milliseconds(Int64(($0 * 1000).rounded(.up))) },
                                 uidRange: uids)
        options.preparedNetwork = network
        var reports: [RunReport] = []
        do {
            if launches == 1 {
                reports = [try ExtensionRun.run(spec, options: options)]
            } else {
                reports = try RunCommand.repeatedLaunches(spec, options: options, count: launches)
            }
        } catch let e as LaunchError {
            FileHandle.standardError.write(Data("appex run: \(spec.bundleIdentifier): \(e)\n".utf8))
            throw ExitCode(1)
        } catch let e as SandboxError {
            FileHandle.standardError.write(Data("appex run: \(spec.bundleIdentifier): \(e)\n".utf8))
            throw ExitCode(1)
        }
        if json {
            let objects = reports.map { RunCommand.jsonObject($0, spec: spec, extensionPoint: point) }
            try JSONOutput.print(objects.count == 1 ? objects[0] as Any : objects as Any)
        } else {
            print(reports.map { RunCommand.humanReport($0, spec: spec, extensionPoint: point) }.newlineJoined)
        }
    }
}
