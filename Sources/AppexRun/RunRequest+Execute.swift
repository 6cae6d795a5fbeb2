import AppexBundle
import AppexPolicyCore
import AppexSandbox
import AppexStateDirectory

#if canImport(Glibc)
import Glibc
#endif

/// A request checked and resolved: the sandbox spec under its effective policy. Nothing has
/// been created yet (container, cgroup, process): up to here a run can still be handed to
/// another process to do from the start.
public struct PreparedRun: Sendable {
    public var spec: SandboxSpec
    public var extensionPoint: String
    public var options: RunOptions
    public var launches: Int
    public var json: Bool
    /// The extension's output is on our stdout and stderr: the report goes to stderr.
    public var stdio = false
}

/// What preparing a request came to.
public enum RunPreparation: Sendable {
    case ready(PreparedRun)
    /// The command line is wrong: the message argument-parser's `ValidationError` would carry.
    case usage(String)
    /// `policies` returned nil: the compiled policies are not cached (AppexPolicyCore cannot
    /// compile YAML), so the full tool must run this command.
    case policiesNotCached
}

/// A run that started and failed before the extension ran: `message` goes to stderr, and the
/// command exits `status` (ExitStatus.osError: a sandbox or launch step failed).
public struct RunFailure: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var status = ExitStatus.osError
    public var description: String { message }
}

extension RunRequest {
    /// The thread that makes the sandbox's network namespace on the other CPU while this one
    /// reads the command line and the policy (PreparedNetworkNamespace). Its namespace is
    /// closed unused if the policy grants the host network.
    public static func startHelper() -> PreparedNetworkNamespace {
        PreparedNetworkNamespace.start()
    }

    /// Checks the request and resolves its policy, creating nothing. `policies`: the policy
    /// set for the overlays, narrowed to the extension point (`PolicyLocator.cached` in the
    /// Foundation-free `appex`, `PolicyLocator.load` in the full tool). Throws what loading
    /// the bundle or the policies throws.
    public func prepare(
        network: PreparedNetworkNamespace,
        policies: (_ overlays: [String], _ extensionPoint: String) throws -> PolicySet?
    ) throws -> RunPreparation {
        // stat, not FileManager (its first use in a process would be paid by every run).
        var st = stat()
        guard stat(bundle, &st) == 0 else { return .usage("\(bundle): no such file or directory") }
        // The extension point first, then only its policy: the cache's other policies are
        // not decoded.
        var spec: SandboxSpec
        let point: String
        if st.st_mode & S_IFMT == S_IFDIR {
            let loaded = try ExtensionBundle.load(path: bundle)
            guard let p = extensionPoint ?? loaded.info.extensionInfo?.pointIdentifier else {
                return .usage("\(bundle) declares no NSExtensionPointIdentifier; pass --extension-point")
            }
            guard let set = try policies(policyDirs, p) else { return .policiesNotCached }
            point = p
            spec = try SandboxSpec(
                bundle: loaded, policy: EffectivePolicy(extensionPoint: p, entitlements: loaded.entitlements, in: set),
                arguments: arguments)
            // A one-off run mounts no app group: a bundle names its groups (and its containing
            // app) itself, and only an install binds a group to an app (Docs/security-model.md).
            spec.appGroups = []
        } else {
            guard let extensionPoint else {
                return .usage("\(bundle) is not a bundle directory; pass --extension-point to run a bare executable")
            }
            guard let set = try policies(policyDirs, extensionPoint) else { return .policiesNotCached }
            point = extensionPoint
            spec = SandboxSpec(
                executable: AbsolutePath.of(bundle), policy: EffectivePolicy(extensionPoint: extensionPoint, in: set),
                arguments: arguments)
        }
        if let timeout, !(timeout > 0) { return .usage("--timeout must be a positive number of seconds") }
        guard launches >= 1 else { return .usage("--launches must be at least 1") }
        guard let uids = UIDRangeCheck.parse(uidRange) else {
            return .usage("--uid-range must be START-END with 1000 <= START <= END, not \"\(uidRange)\"")
        }
        var options = RunOptions(
            stateDirectory: AbsolutePath.of(stateDir),
            timeout: timeout.map { .milliseconds(Int64(($0 * 1000).rounded(.up))) },
            uidRange: uids)
        options.preparedNetwork = network
        let stdio = self.stdio ?? (isatty(STDOUT_FILENO) == 1)
        if stdio {
            options.passOutput = true
            // A reader that goes away ends the copy to it (EPIPE), not this run.
            signal(SIGPIPE, SIG_IGN)
        }
        return .ready(
            PreparedRun(
                spec: spec, extensionPoint: point, options: options, launches: launches, json: json,
                stdio: stdio))
    }
}

extension PreparedRun {
    /// Runs it: once, or `launches` times into one sandbox built for them. A launch or sandbox
    /// failure becomes a `RunFailure` naming the bundle; other errors pass through.
    public func execute() throws -> [RunReport] {
        do {
            if launches == 1 { return [try ExtensionRun.run(spec, options: options)] }
            return try Self.repeatedLaunches(spec, options: options, count: launches)
        } catch let e as LaunchError {
            throw RunFailure(message: "appex run: \(spec.bundleIdentifier): \(e)")
        } catch let e as SandboxError {
            throw RunFailure(message: "appex run: \(spec.bundleIdentifier): \(e)")
        }
    }

    /// appex's exit status after these launches: the last one's, as bwrap passes its child's
    /// through; 128 + N when signal N ended it.
    public static func exitStatus(_ reports: [RunReport]) -> Int32 {
        guard let last = reports.last else { return ExitStatus.osError.rawValue }
        if let signal = last.signal { return ExitStatus.killed(by: signal) }
        return last.exitStatus ?? ExitStatus.success.rawValue
    }

    /// Prints the report (to stderr when the extension's output is on stdout) and exits with
    /// the extension's status.
    public func finish(_ reports: [RunReport]) -> Never {
        let text = output(reports)
        if stdio { StandardError.line(text) } else { print(text) }
        exit(Self.exitStatus(reports))
    }

    /// The reports as the command prints them: one JSON object (an array for several
    /// launches) or the human summary.
    public func output(_ reports: [RunReport]) -> String {
        if json {
            let objects = reports.map { RunReportText.json($0, spec: spec, extensionPoint: extensionPoint) }
            return (objects.count == 1 ? objects[0] : .array(objects)).pretty()
        }
        return reports.map { RunReportText.human($0, spec: spec, extensionPoint: extensionPoint) }.newlineJoined
    }

    /// `count` launches into one sandbox built for them; the first report carries its build
    /// time as `view`, counted inside its `prepare` as for a single run (Docs/launch-sequence.md).
    public static func repeatedLaunches(_ spec: SandboxSpec, options: RunOptions, count: Int) throws -> [RunReport] {
        let store = ContainerStore(stateRoot: options.stateDirectory, uidRange: options.uidRange)
        let container = try store.prepare(bundleIdentifier: spec.bundleIdentifier, appGroups: spec.appGroups)
        let sandbox = try ExtensionSandbox.create(
            spec: spec, container: container, store: store,
            isolateNetwork: options.isolateNetwork,
            preparedNetwork: options.preparedNetwork)
        defer { sandbox.close() }
        var reports = try (0..<count).map { _ in try ExtensionRun.run(spec, options: options, sandbox: sandbox) }
        let view = Int64(sandbox.buildNanos / 1000)
        reports[0].phases["view"] = view
        reports[0].phases["prepare", default: 0] += view
        return reports
    }
}
