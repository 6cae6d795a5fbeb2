import AppexPolicy
import AppexRun
import AppexSandbox
import ArgumentParser

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
}

extension RunRequest {
    /// `appex run`'s work in the full tool: the same steps as the `appex` front's
    /// (`AppexRun`), with policies compiled when the cache does not hold them.
    func execute() throws {
        let prepared: PreparedRun
        switch try prepare(network: Self.startHelper(), policies: { try PolicyLocator.load(overlays: $0, only: $1) }) {
        case .ready(let p): prepared = p
        case .usage(let message): throw ValidationError(message)
        case .policiesNotCached: throw ValidationError("policies could not be loaded")  // load compiles: not reached
        }
        let reports: [RunReport]
        do {
            reports = try prepared.execute()
        } catch let failure as RunFailure {
            StandardError.line(failure.message)
            throw ExitCode(1)
        }
        print(prepared.output(reports))
    }
}
