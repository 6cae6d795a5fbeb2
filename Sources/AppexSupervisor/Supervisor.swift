import AppexCgroups
import AppexPolicy
import AppexRegistry
import AppexSandbox
import AppexStateDirectory
import AppexWire
import Dispatch
import Foundation
import Logging
import Synchronization

/// How a supervisor runs: where its state is, which policies, which cgroups and uids.
public struct SupervisorOptions: Sendable {
    /// The state directory when none is named: `/var/lib/appex` as root, else
    /// `$XDG_STATE_HOME/appex` (`~/.local/state/appex`).
    public static var defaultStateDirectory: String {
        if geteuid() == 0 { return "/var/lib/appex" }
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.local/state")
        return base + "/appex"
    }

    /// Registry, installed bundles, containers, uids, logs (Docs/registry.md).
    public var stateDirectory: String
    /// Policy directories layered over the shipped ones (`PolicyLocator.load(overlays:)`).
    public var policyOverlays: [String]
    /// The cgroup parent under which every instance gets its own cgroup. Only the supervisor
    /// creates cgroups there (it claims the parent, `CgroupParentClaim`), so what is found
    /// there at start belongs to a dead predecessor. Default: from the state directory
    /// (`CgroupParentName.daemon`).
    public var cgroupParent: String
    /// nil: detect the system's cgroups (`CgroupManager.detect`).
    public var cgroups: CgroupManager?
    public var uidRange: ClosedRange<UInt32>
    /// How long an extension told to terminate (idle exit, shutdown, disable) may take before
    /// it is killed.
    public var terminateGrace: Duration
    /// The footprint all extensions together may use; nil: none, and only the system's
    /// signals raise the pressure level (Docs/jetsam.md).
    public var memoryBudget: Int64?
    /// How far above the budget the kernel's own limit on the parent cgroup sits; nil:
    /// `BudgetLimits.defaultHeadroom`.
    public var budgetHeadroom: Int64?
    /// Who dies first inside a band.
    public var victimOrder: VictimOrder
    /// How long an idle instance stays in the aging band; nil: half its idle timeout, ≤ 5 s.
    public var agingDelay: Duration?
    /// MemAvailable below which the level is critical; nil: 2 % of RAM, 64 MiB…512 MiB.
    public var availableFloor: Int64?
    /// Whether the system's memory signals (PSI stalls, MemAvailable) count, besides the
    /// budget. The tests of other features turn them off: the host's memory is not theirs.
    public var watchSystemPressure: Bool
    /// Whether each enabled extension's sandbox (namespaces, view, init) is built ahead of its
    /// first launch, in the background, when it is enabled or installed and when the supervisor
    /// starts, so that launch only enters it (Docs/supervisor.md, "Sandboxes built ahead").
    public var prebuildSandboxes: Bool
    /// App groups granted beyond their owning app (appexd.yaml `appGroups:`): checked at
    /// install and enable, and only groups an extension is a member of are mounted. What the
    /// supervisor starts with; `Supervisor.reconfigure` replaces it while it runs.
    public var appGroupGrants = AppGroupGrants()
    /// `appex_kills_total` also labelled by `bundle_id` (appexd `--kills-by-bundle`): one
    /// series per extension and reason instead of per extension point, for dashboards that
    /// filter kills by extension.
    public var killMetricsByBundle = false

    public init(
        stateDirectory: String, policyOverlays: [String] = [], cgroupParent: String? = nil,
        cgroups: CgroupManager? = nil, uidRange: ClosedRange<UInt32> = UIDAllocator.defaultRange,
        terminateGrace: Duration = .seconds(2), memoryBudget: Int64? = nil,
        victimOrder: VictimOrder = .longestInBand, agingDelay: Duration? = nil, availableFloor: Int64? = nil,
        watchSystemPressure: Bool = true, prebuildSandboxes: Bool = false, budgetHeadroom: Int64? = nil
    ) {
        self.stateDirectory = stateDirectory
        self.policyOverlays = policyOverlays
        self.cgroupParent = cgroupParent ?? CgroupParentName.daemon(stateDirectory: stateDirectory)
        self.cgroups = cgroups
        self.uidRange = uidRange
        self.terminateGrace = terminateGrace
        self.memoryBudget = memoryBudget
        self.budgetHeadroom = budgetHeadroom
        self.victimOrder = victimOrder
        self.agingDelay = agingDelay
        self.availableFloor = availableFloor
        self.watchSystemPressure = watchSystemPressure
        self.prebuildSandboxes = prebuildSandboxes
    }
}

/// The supervisor core: the registry, the life cycle of every extension instance (launch,
/// launch deadline, check-in, requests, timeouts, liveness, warm reuse, idle exit, shutdown)
/// over `ExtensionSandbox`. `appexd` wraps it with a control socket; `appex request --bundle`,
/// the tests and the benchmark embed it.
///
/// All state lives on one `EventLoop` thread (see EventLoop for why). Public methods are
/// safe from any thread: they post to the loop. Methods marked "loop only" are for code that
/// already runs there (the control server), and say so with `loop.assertOnLoop()`.
public final class Supervisor: @unchecked Sendable {
    public let options: SupervisorOptions
    public let loop: EventLoop
    public let registry: Registry
    let logger: Logger
    let cgroups: CgroupManager
    /// This supervisor's hold on its cgroup parent, released at shutdown.
    let parentClaim: CgroupParentClaim
    /// The cgroups instances get (for the stale sweep at start).
    public var cgroupManager: CgroupManager { cgroups }
    /// What `reconfigure` (appexd's SIGHUP) replaces while extensions run; read from the loop
    /// and from the workers that load catalog entries.
    let live: Mutex<LiveSettings>
    struct LiveSettings: Sendable {
        var policies: PolicySet
        var appGroupGrants: AppGroupGrants
    }
    var policies: PolicySet { live.withLock { $0.policies } }
    var appGroupGrants: AppGroupGrants { live.withLock { $0.appGroupGrants } }
    var catalog: [String: CatalogEntry] = [:] {
        didSet {
            catalogGeneration &+= 1
            metricsCache.extensions = nil
        }
    }
    /// Changes whenever the catalog does (a scrape redoes its per-extension work only then).
    var catalogGeneration: UInt64 = 0
    /// What the last scrape was given, kept while nothing it shows changed (Metrics/).
    var metricsCache = MetricsSnapshotCache()
    var slots: [String: ExtensionSlot] = [:]
    /// Each host's open requests (Host/OpenRequests.swift).
    var openRequests = OpenRequests()
    /// Where off-loop work runs (arming footprint lines, reaping, removing cgroups, registry
    /// changes). A queue of its own is served by threads made as needed: on the global queue,
    /// as many jobs as there are CPUs blocked in the kernel (a cgroup removal, an RCU grace
    /// period) held every later one back, a new instance's footprint lines among them.
    let workers = DispatchQueue(label: "appex.supervisor.workers", attributes: .concurrent)
    var instanceCounter = 0
    /// Every termination the supervisor caused or observed, oldest first (bounded).
    var terminations: [TerminationRecord] = []
    var shuttingDown = false
    var exitWaiters: [ExitWaiter] = []
    /// Where history rows are written (History/Supervisor+History.swift).
    let historyQueue = DispatchQueue(label: "appex.supervisor.history")
    let historyBuffer = HistoryBuffer()
    /// The memory governor's state (Memory/Supervisor+Pressure.swift).
    let jetsam = JetsamState()
    /// Instruments (Metrics/SupervisorMetrics.swift).
    let metrics = SupervisorMetrics()
    /// Background transfers (Transfers/).
    let transfers = TransferState()
    /// Connected hosts by the bundle identifier they said in Hello: where a containing app's
    /// extensions' transfer events go first (Transfers/).
    var transferEventHosts: [String: [HostSession]] = [:]
    private var thread: Thread?

    public init(options: SupervisorOptions, logger: Logger = Logger(label: "appex.supervisor")) throws {
        self.options = options
        self.logger = logger
        metrics.killsByBundle = options.killMetricsByBundle
        loop = try EventLoop()
        registry = try Registry(stateDirectory: options.stateDirectory)
        live = Mutex(
            LiveSettings(
                policies: try PolicyLocator.load(overlays: options.policyOverlays),
                appGroupGrants: options.appGroupGrants))
        cgroups = try options.cgroups ?? CgroupManager.detect(parentName: options.cgroupParent)
        do {
            parentClaim = try cgroups.claimParent()
        } catch let e as CgroupError where e.errno == .resourceTemporarilyUnavailable {
            throw SupervisorError.inUse(
                "claim the cgroup parent \(cgroups.parentName)",
                "another supervisor runs its extensions under \(e.path); give this one its own --state-dir or --cgroup-parent")
        }
        try reloadCatalog()
    }

    /// Runs the loop on a thread of its own.
    public func start() {
        loop.post { [self] in
            startMemoryGovernor()
            resumeTransfers()
            for entry in catalog.values.sorted(by: { $0.identifier < $1.identifier }) { prebuildSandbox(entry) }
        }
        let loop = self.loop
        let t = Thread { loop.run() }
        t.name = "appex-supervisor"
        t.start()
        thread = t
    }

    /// Runs `body` on the loop and returns its result.
    public func onLoop<T: Sendable>(_ body: @escaping @Sendable (Supervisor) -> T) async -> T {
        await withCheckedContinuation { c in
            loop.post { [self] in c.resume(returning: body(self)) }
        }
    }

    // MARK: catalog

    /// Rebuilds the in-memory catalog from the registry. An extension whose copy no longer
    /// loads is left out (logged), never the whole catalog.
    func reloadCatalog() throws {
        var fresh: [String: CatalogEntry] = [:]
        let membership = try registry.appGroupMembership(grants: appGroupGrants)
        let policies = self.policies
        for installed in try registry.list() {
            fresh[installed.bundleIdentifier] = loadCatalogEntry(installed, policies: policies, membership: membership)
        }
        catalog = fresh
    }

    /// `installed` as the catalog holds it, or nil (logged) when its copy no longer loads.
    func loadCatalogEntry(_ installed: InstalledExtension, policies: PolicySet, membership: AppGroupMembership) -> CatalogEntry? {
        do {
            let entry = try CatalogEntry.load(installed, policies: policies, membership: membership)
            if !entry.withheldGroups.isEmpty {
                logger.warning(
                    "catalog: \(installed.bundleIdentifier): app groups not mounted, not a member: \(entry.withheldGroups.joined(separator: ", "))")
            }
            return entry
        } catch {
            logger.error("catalog: \(installed.bundleIdentifier) left out: \(error)")
            return nil
        }
    }

    func slot(for identifier: String) -> ExtensionSlot {
        if let s = slots[identifier] { return s }
        let s = ExtensionSlot(identifier: identifier)
        slots[identifier] = s
        return s
    }

    var runOptions: RunOptions {
        RunOptions(
            stateDirectory: options.stateDirectory, cgroups: cgroups, uidRange: options.uidRange,
            onDeniedSyscall: SupervisorMetrics.deniedSyscall)
    }
}
