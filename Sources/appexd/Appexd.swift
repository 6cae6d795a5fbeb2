// appexd: the Appex supervisor daemon. A thin executable: it reads its configuration, takes
// the state directory, sweeps what a dead predecessor left, starts the supervisor and its
// control socket, tells systemd it is ready, on SIGHUP reloads its configuration, and on
// SIGTERM/SIGINT shuts everything down in order (Docs/deployment.md).
import AppexDaemon
import AppexMetrics
import AppexPolicy
import AppexRegistry
import AppexSandbox
import AppexStateDirectory
import AppexSupervisor
import AppexVersion
import AppexWire
import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

@main
struct Appexd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appexd",
        abstract: "The Appex extension supervisor daemon.",
        version: AppexVersion.current)

    @Option(help: "Configuration file (default \(DaemonConfiguration.defaultPath); a missing default means root only).")
    var config: String?

    @Option(help: "State directory: registry, installed bundles, containers, logs (default /var/lib/appex as root, $XDG_STATE_HOME/appex otherwise).")
    var stateDir: String?

    @Option(help: "Control socket path (default \(WireProtocol.defaultControlSocketPath)).")
    var socket: String?

    @Option(name: .customLong("policy-dir"), help: "A policy directory layered over the shipped policies (repeatable).")
    var policyDirs: [String] = []

    /// `--policy-dir`'s old name, still read (as by every appex command), not shown.
    @Option(name: .customLong("policies"), help: .hidden)
    var policiesOldName: [String] = []

    /// The overlays, in the order given.
    var policyDirectories: [String] { policyDirs + policiesOldName }

    @Option(
        help: ArgumentHelp(
            "The cgroup parent of the extensions' cgroups (only this appexd creates cgroups there; default appexd for /var/lib/appex, else appexd-<hash of the state directory>).",
            visibility: .hidden))
    var cgroupParent: String?

    @Option(
        name: .customLong("uid-range"),
        help: "Uids and gids for extensions and their sandbox inits, START-END (checked against /etc/passwd, group, subuid, subgid).")
    var uidRange = "\(UIDAllocator.defaultRange.lowerBound)-\(UIDAllocator.defaultRange.upperBound)"

    @Option(
        help:
            "Where to serve Prometheus metrics (GET /metrics): HOST:PORT, port 0 for any free port, or off (default \(MetricsEndpoint.default), or the configuration's `metrics`)."
    )
    var metrics: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (default info, or the configuration's logLevel).")
    var logLevel: String?

    @Option(
        help:
            "Log format: text (lines on standard error), json (one object per line on standard error) or journal (the systemd journal's native protocol, metadata as fields)."
    )
    var logFormat: String = LogFormat.text.rawValue

    @Option(
        help:
            "Memory budget for all extensions together, e.g. 512MiB: pressure levels and jetsam kills are judged against it (overrides the configuration file's memoryBudget)."
    )
    var memoryBudget: String?

    @Option(
        help:
            "How far above the memory budget the kernel's own limit on the extensions' parent cgroup sits, so that appexd's kill lands before the kernel's OOM killer (default: a quarter of the budget, at least 64MiB; 0 puts it at the budget; overrides the configuration file's budgetHeadroom)."
    )
    var budgetHeadroom: String?

    @Option(help: "Who dies first inside a jetsam band: longest-in-band (XNU, lmkd) or largest-footprint.")
    var victimOrder: String = VictimOrder.longestInBand.rawValue

    @Flag(
        inversion: .prefixedNo, help: "Let the host's memory signals (PSI stalls, MemAvailable) raise the pressure level, besides the memory budget.")
    var systemPressure = true

    @Flag(
        inversion: .prefixedNo,
        help:
            "Build each enabled extension's sandbox ahead of its first launch, in the background, so that launch only enters it (overrides the configuration's prebuildSandboxes; default off)."
    )
    var prebuildSandboxes: Bool?

    @Flag(
        inversion: .prefixedNo,
        help:
            "Label appex_kills_total with bundle_id too, so kills can be told apart by extension (overrides the configuration's killsByBundle; default off: one series per extension point)."
    )
    var killsByBundle: Bool?

    /// `--metrics`, checked before anything else happens.
    var metricsFlag: MetricsEndpoint? {
        get throws {
            guard let metrics else { return nil }
            guard let endpoint = MetricsEndpoint(parsing: metrics) else {
                throw ValidationError("--metrics must be HOST:PORT (127.0.0.1:9464, [::1]:9464) or off, not \"\(metrics)\"")
            }
            return endpoint
        }
    }

    func validate() throws {
        _ = try metricsFlag
        guard LogFormat(rawValue: logFormat) != nil else {
            throw ValidationError("--log-format must be one of \(LogFormat.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(logFormat)\"")
        }
        if let logLevel, Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("--log-level must be one of \(DaemonConfiguration.logLevels.joined(separator: ", ")), not \"\(logLevel)\"")
        }
        if !policyDirs.isEmpty && !policiesOldName.isEmpty {
            throw ValidationError("--policies is the old name of --policy-dir: give every overlay with --policy-dir")
        }
    }

    /// The configuration keys the command line sets: a reload leaves them as they are.
    var overriddenKeys: Set<String> {
        var keys = Set<String>()
        if stateDir != nil { keys.insert("stateDirectory") }
        if socket != nil { keys.insert("socket") }
        if metrics != nil { keys.insert("metrics") }
        if memoryBudget != nil { keys.insert("memoryBudget") }
        if budgetHeadroom != nil { keys.insert("budgetHeadroom") }
        if prebuildSandboxes != nil { keys.insert("prebuildSandboxes") }
        if logLevel != nil { keys.insert("logLevel") }
        if killsByBundle != nil { keys.insert("killsByBundle") }
        return keys
    }

    func run() async throws {
        do {
            try await serve()
        } catch let error where !(error is ValidationError || error is ExitCode) {
            // Said once, whole, in the log's words, then the status that classes it.
            FileHandle.standardError.write(Data("appexd: \(error)\n".utf8))
            throw ExitCode(DaemonExitStatus.status(for: error).rawValue)
        }
    }

    private func serve() async throws {
        let level = ReloadableLogLevel(logLevel.flatMap(Logger.Level.init(rawValue:)) ?? .info)
        let format = try (LogFormat(rawValue: logFormat) ?? .text).makeHandler()
        LoggingSystem.bootstrap { label in level.handler(format(label)) }
        let logger = Logger(label: "appexd")
        // Before the supervisor opens anything: the slots must have low numbers.
        Launcher.reserveDescriptorSlots()
        if let files = DescriptorLimit.raiseToHard() {
            logger.debug("descriptors: up to \(files.soft) (RLIMIT_NOFILE)")
        }

        let settings = try DaemonConfiguration.load(path: config ?? DaemonConfiguration.defaultPath, explicit: config != nil)
        if logLevel == nil, let named = settings.logLevel.flatMap(Logger.Level.init(rawValue:)) { level.current = named }
        let state = stateDir ?? (settings.file != nil ? settings.stateDirectory : SupervisorOptions.defaultStateDirectory)
        let socketPath = socket ?? (settings.file != nil ? settings.socketPath : WireProtocol.defaultControlSocketPath)

        guard let uids = UIDRangeCheck.parse(uidRange) else {
            throw ValidationError("--uid-range must be START-END with 1000 <= START <= END, not \"\(uidRange)\"")
        }
        var budget = settings.memoryBudget?.bytes
        if let text = memoryBudget {
            guard let size = ByteSize(parsing: text), size.bytes > 0 else {
                throw ValidationError("--memory-budget must be a positive size such as 512MiB, not \"\(text)\"")
            }
            budget = size.bytes
        }
        var headroom = settings.budgetHeadroom?.bytes
        if let text = budgetHeadroom {
            guard let size = ByteSize(parsing: text), size.bytes >= 0 else {
                throw ValidationError("--budget-headroom must be a size such as 64MiB, not \"\(text)\"")
            }
            headroom = size.bytes
        }
        guard let order = VictimOrder(rawValue: victimOrder) else {
            throw ValidationError(
                "--victim-order must be one of \(VictimOrder.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(victimOrder)\"")
        }
        let metricsEndpoint = try metricsFlag ?? settings.metrics
        // Before the supervisor exists, so that its instruments find the backend; with the
        // endpoint off, swift-metrics stays on its no-op backend.
        let metricsBackend: MetricsBackend? = metricsEndpoint == .off ? nil : MetricsBackend.bootstrap()
        // Both before anything is touched: a second appexd on either is refused, naming the first.
        let lock = try StateDirectoryLock(stateDirectory: state)
        let socketLock = try ControlSocketLock(socketPath: socketPath)
        var options = SupervisorOptions(
            stateDirectory: state, policyOverlays: policyDirectories, cgroupParent: cgroupParent,
            uidRange: uids, terminateGrace: settings.shutdownGrace, memoryBudget: budget, victimOrder: order,
            watchSystemPressure: systemPressure, prebuildSandboxes: prebuildSandboxes ?? settings.prebuildSandboxes,
            budgetHeadroom: headroom)
        options.appGroupGrants = AppGroupGrants(settings.appGroups)
        options.killMetricsByBundle = killsByBundle ?? settings.killsByBundle
        let supervisor = try Supervisor(options: options, logger: Logger(label: "appexd.supervisor"))
        let swept = try StaleSweep.run(
            stateDirectory: state, cgroups: supervisor.cgroupManager,
            uidRange: supervisor.options.uidRange)
        if !swept.isEmpty {
            logger.notice("removed what a previous appexd left: cgroups \(swept.cgroups), killed pids \(swept.killedPIDs)")
        }
        var metricsRunner: MetricsEndpointRunner?
        if case .listen(let host, let port) = metricsEndpoint, let metricsBackend {
            metricsRunner = try await MetricsEndpointRunner.start(
                host: host, port: port, backend: metricsBackend,
                supervisor: supervisor, stateDirectory: state, logger: logger)
        }
        supervisor.start()
        let authorization = LiveAuthorization(settings)
        let server = ControlServer(
            supervisor: supervisor, path: socketPath, authorization: authorization, limits: settings.clients,
            logger: Logger(label: "appexd.control"), socketLock: socketLock)
        let reloader = ConfigurationReloader(
            path: config ?? DaemonConfiguration.defaultPath, explicit: config != nil, overridden: overriddenKeys,
            policyOverlays: policyDirectories, authorization: authorization, logLevel: level, defaultLogLevel: .info,
            supervisor: supervisor, server: server, logger: logger)
        // The control socket opens inside the service, once the group traps SIGTERM and SIGINT:
        // a client that sees appexd answer may signal it at once, and that must be graceful.
        let metricsAt = metricsRunner.map { "http://\($0.server.address)/metrics" } ?? "off"
        let service = AppexdService(
            supervisor: supervisor, server: server, metrics: metricsRunner, reloader: reloader, logger: logger,
            readyLine: "state \(state), socket \(socketPath), metrics \(metricsAt)", socketPath: socketPath)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
        withExtendedLifetime(lock) {}
    }
}

/// The daemon as a service: it runs until the group shuts down gracefully (a signal), then
/// stops accepting, terminates the extensions (killing them after the grace period), and
/// removes their sandboxes and cgroups. Meanwhile each SIGHUP reloads the configuration.
struct AppexdService: Service {
    let supervisor: Supervisor
    let server: ControlServer
    let metrics: MetricsEndpointRunner?
    let reloader: ConfigurationReloader
    let logger: Logger
    let readyLine: String
    let socketPath: String

    func run() async throws {
        // Trapped before READY=1: from then on systemd may send it (ExecReload=), and its
        // default action would end appexd.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        do {
            try await server.start()
            let installed = try await supervisor.list().count
            logger.notice("ready: \(readyLine), \(installed) extensions installed")
            _ = try? SDNotify.notify("READY=1\nSTATUS=serving on \(socketPath)\nMAINPID=\(getpid())")
            if let every = SystemdWatchdog.start(on: supervisor.loop) {
                logger.info("systemd watchdog: WATCHDOG=1 from the supervisor loop every \(every)")
            }
        } catch {
            // Nothing is served: stop what runs, then fail the group (appexd exits non-zero).
            await metrics?.stop()
            await supervisor.shutdown()
            throw error
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [reloader] in
                for await _ in hangups { await reloader.reloadNotifying() }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        logger.notice("shutting down")
        _ = try? SDNotify.notify("STOPPING=1")
        await server.stop()
        await metrics?.stop()
        await supervisor.shutdown()
        logger.notice("stopped")
    }
}
