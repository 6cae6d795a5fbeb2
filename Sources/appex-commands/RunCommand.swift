import AppexPolicy
import AppexRun
import AppexSandbox
import ArgumentParser

/// `appex run BUNDLE [-- ARGS]`: one extension under its effective policy, to its exit.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run an extension in its sandbox; report how it ended.",
        discussion: """
            Run an extension in its sandbox and report its exit, kill reason, peak memory and launch phases. \
            The extension runs in its own cgroup (memory and pids limits), mount, pid, ipc, uts \
            (and, unless its policy grants the network, net) namespaces, as its own uid, with its \
            policy's seccomp filter. Its stdout and stderr go to <state>/logs/<bundle-id>.log \
            (`appex logs`), and with --stdio (the default when appex's stdout is a terminal) to appex's \
            own stdout and stderr as well (the report then goes to stderr). Needs root. See Docs/security-model.md and Docs/launch-sequence.md.
            Exit status: the extension's own; 128+N when signal N killed it (137 at its memory \
            limit or --timeout); before the extension ran, the table in `appex --help` (64 a \
            wrong command line, 66 no such bundle, 71 the sandbox could not be set up).
            """)

    @Argument(help: "An .appex bundle directory, or an executable with --extension-point.")
    var bundle: String

    @Argument(parsing: .postTerminator, help: "Arguments for the extension (after --).")
    var arguments: [String] = []

    @Flag(help: "Print one JSON object: exitStatus, signal, killReason, peakMemoryBytes, phases (µs), …")
    var json = false

    @Flag(
        inversion: .prefixedNo,
        help:
            "Show the extension's stdout and stderr on appex's own (besides its log); the report goes to stderr. Default: when stdout is a terminal.")
    var stdio: Bool?

    @Option(name: .customLong("extension-point"), help: "Run under this extension point's policy (required for a bare executable).")
    var extensionPoint: String?

    @OptionGroup var policyOverlays: PolicyOverlayOptions

    @Option(name: .customLong("state-dir"), help: "State root: containers, uids, logs.")
    var stateDir = RunRequest.defaultStateDir

    @Option(
        name: .customLong("uid-range"),
        help: ArgumentHelp(
            "Host uids and gids Appex gives extensions and their sandboxes, START-END.",
            discussion: "Checked against /etc/passwd, /etc/group, /etc/subuid and /etc/subgid: an overlap is refused."))
    var uidRange = RunRequest.defaultUIDRange

    @Option(help: "Kill the extension after this many seconds (kill reason run-timeout).")
    var timeout: Double?

    @Option(
        help: ArgumentHelp(
            "Launch it this many times, one after another, into one sandbox, as a supervisor does.",
            discussion:
                "The first launch builds the extension's sandbox (phase view), later ones only enter it. With --json, more than one launch prints an array of reports."
        ))
    var launches = 1

    func run() throws {
        try request.execute()
    }

    /// The parsed options as plain values.
    var request: RunRequest {
        RunRequest(
            bundle: bundle, arguments: arguments, json: json, extensionPoint: extensionPoint,
            policyDirs: policyOverlays.directories, stateDir: stateDir, uidRange: uidRange, timeout: timeout, launches: launches,
            stdio: stdio)
    }
}

extension RunRequest {
    /// `appex run`'s work in the full tool: the same steps as the `appex` front's
    /// (`AppexRun`), with policies compiled when the cache does not hold them.
    func execute() throws {
        let prepared: PreparedRun
        switch try prepare(network: Self.startHelper(), policies: { try PolicyLocator.load(overlays: $0, only: $1) }) {
        case .ready(let p): prepared = p
        case .usage(let message):
            // A bundle that is not there is not a usage mistake (ExitStatus.noInput).
            if message.hasSuffix(": no such file or directory") { throw CommandFailure(.noInput, "appex run: \(message)") }
            throw ValidationError(message)
        case .policiesNotCached: throw ValidationError("policies could not be loaded")  // load compiles: not reached
        }
        let reports: [RunReport]
        do {
            reports = try prepared.execute()
        } catch let failure as RunFailure {
            throw CommandFailure(failure.status, failure.message)
        }
        prepared.finish(reports)
    }
}
