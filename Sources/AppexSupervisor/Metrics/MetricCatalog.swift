/// One metric appexd exports: its Prometheus name, type, help text, label names and, for a
/// histogram, its bucket bounds. swift-metrics carries only a label and dimensions, so the
/// backend (AppexMetrics) looks the help text and buckets up here by name; Docs/metrics.md
/// describes the same list for people.
public struct MetricDefinition: Sendable, Hashable {
    public enum Kind: String, Sendable { case counter, gauge, histogram }

    public let name: String
    public let kind: Kind
    public let help: String
    public let labels: [String]
    /// Upper bounds of a histogram's buckets, ascending (`+Inf` is implied); empty otherwise.
    public let buckets: [Duration]

    public init(_ name: String, _ kind: Kind, labels: [String] = [], buckets: [Duration] = [], help: String) {
        self.name = name
        self.kind = kind
        self.help = help
        self.labels = labels
        self.buckets = buckets
    }
}

/// Every metric appexd exports. Label values are bounded: extension points and bundle
/// identifiers by what is installed, phases, outcomes, reasons and bands by the code and the
/// policy schema, syscalls by the policies' notify groups. No pid or instance number ever
/// becomes a label.
public enum MetricCatalog {
    /// Launch phases run from tens of microseconds (a clone into a kept sandbox) to the launch
    /// deadline (1 s by default, up to seconds for a slow runtime).
    public static let launchBuckets: [Duration] = [
        .microseconds(25), .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
        .milliseconds(1), .milliseconds(2) + .microseconds(500), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2500), .seconds(5),
    ]

    /// Requests: from a warm round trip (around a hundred microseconds) to the request timeout
    /// (30 s by default); a cold one adds a launch.
    public static let requestBuckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
        .milliseconds(2) + .microseconds(500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
    ]

    public static let launchDuration = MetricDefinition(
        "appex_launch_duration_seconds", .histogram, labels: ["phase", "extension_point", "start"], buckets: launchBuckets,
        help:
            "Launch time by phase: handOff (decision to the launch worker), view, prepare, clone, sandbox, exec, spawn (the sandbox's), checkIn (decision to Hello), firstRequest (its round trip; start=warm for a reused instance)."
    )
    public static let sandboxBuilds = MetricDefinition(
        "appex_sandbox_build_duration_seconds", .histogram, labels: ["trigger"], buckets: launchBuckets,
        help:
            "Extension sandboxes built (namespaces, view, init), by what built them: a first launch (trigger=launch), or appexd ahead of it (trigger=prebuild, appexd --prebuild-sandboxes)."
    )
    public static let requestDuration = MetricDefinition(
        "appex_request_duration_seconds", .histogram, labels: ["extension_point", "start"], buckets: requestBuckets,
        help: "Admitted requests from admission to outcome, as the host waits for them; start=cold when the request launched its instance.")
    public static let requests = MetricDefinition(
        "appex_requests_total", .counter, labels: ["outcome", "reason", "extension_point"],
        help: "Admitted requests by outcome (completed, cancelled, failed) and, for failed ones, appexd's reason.")
    public static let refusals = MetricDefinition(
        "appex_request_refusals_total", .counter, labels: ["reason"],
        help: "Requests refused before they were admitted (unknown-extension, disabled, not-activated, not-authorized, shutdown).")
    public static let kills = MetricDefinition(
        "appex_kills_total", .counter, labels: ["reason", "band", "extension_point"],
        help: "Extension processes that appexd or the kernel ended, by reason and by the jetsam band of their extension point.")
    public static let memoryWarnings = MetricDefinition(
        "appex_memory_warnings_total", .counter, labels: ["bundle_id"],
        help: "Memory warnings sent to instances: a footprint past 80 % of its limit, or memory pressure at warning or above.")
    public static let deniedSyscalls = MetricDefinition(
        "appex_denied_syscalls_total", .counter, labels: ["bundle_id", "syscall"],
        help: "System calls denied by a notify rule, answered by appexd with the rule's errno.")
    public static let footprint = MetricDefinition(
        "appex_extension_footprint_bytes", .gauge, labels: ["bundle_id"],
        help: "Footprint (anonymous, shared, dirty and writeback memory) of an installed extension's live instances, summed; 0 when none runs.")
    public static let peak = MetricDefinition(
        "appex_extension_peak_memory_bytes", .gauge, labels: ["bundle_id"],
        help: "Largest cgroup memory high-water mark of any instance of the extension since appexd started.")
    public static let memoryLimit = MetricDefinition(
        "appex_extension_memory_limit_bytes", .gauge, labels: ["bundle_id", "state"],
        help: "The hard footprint limits of the extension's policy: state=active while serving, inactive while idle.")
    public static let liveInstances = MetricDefinition(
        "appex_extensions_live", .gauge, labels: ["band"],
        help:
            "Live extension instances by the jetsam band they are in now (active band while launching or serving; aging, then the idle band, while idle)."
    )
    public static let installed = MetricDefinition(
        "appex_extensions_installed", .gauge, labels: ["enabled"],
        help: "Installed extensions, enabled or not.")
    public static let pressureLevel = MetricDefinition(
        "appex_memory_pressure_level", .gauge,
        help: "The jetsam's memory pressure level: 0 normal, 1 warning (memory warnings go out), 2 critical (extensions are killed in victim order).")
    public static let supervisorCPU = MetricDefinition(
        "appex_supervisor_cpu_seconds_total", .counter,
        help: "CPU time appexd itself has used, user and system (/proc/self/stat).")
    public static let supervisorResident = MetricDefinition(
        "appex_supervisor_resident_memory_bytes", .gauge,
        help: "appexd's own resident memory (/proc/self/statm).")
    public static let buildInfo = MetricDefinition(
        "appex_build_info", .gauge, labels: ["version"],
        help: "Always 1; the version label is the running appexd's (VERSION).")
    public static let transfers = MetricDefinition(
        "appex_transfers_total", .counter, labels: ["outcome"],
        help: "Background transfers by how they ended (completed, failed, cancelled) or were refused (refused-<reason>).")
    public static let transferBytes = MetricDefinition(
        "appex_transfer_bytes_total", .counter, labels: ["kind"],
        help: "Bytes moved by background transfers that ended, by kind (download, upload).")

    // The standard process metrics every Prometheus client library exports under these names
    // (client_golang's process collector), so generic dashboards and alerts find appexd.
    public static let processCPU = MetricDefinition(
        "process_cpu_seconds_total", .counter, help: "Total user and system CPU time spent in seconds.")
    public static let processResident = MetricDefinition(
        "process_resident_memory_bytes", .gauge, help: "Resident memory size in bytes.")
    public static let processVirtual = MetricDefinition(
        "process_virtual_memory_bytes", .gauge, help: "Virtual memory size in bytes.")
    public static let processStartTime = MetricDefinition(
        "process_start_time_seconds", .gauge, help: "Start time of the process since unix epoch in seconds.")
    public static let processOpenFDs = MetricDefinition(
        "process_open_fds", .gauge, help: "Number of open file descriptors.")
    public static let processMaxFDs = MetricDefinition(
        "process_max_fds", .gauge, help: "Maximum number of open file descriptors.")

    public static let all: [MetricDefinition] = [
        launchDuration, sandboxBuilds, requestDuration, requests, refusals, kills, memoryWarnings, deniedSyscalls, footprint, peak,
        memoryLimit, liveInstances, installed, pressureLevel, supervisorCPU, supervisorResident, buildInfo,
        processCPU, processResident, processVirtual, processStartTime, processOpenFDs, processMaxFDs,
        transfers, transferBytes,
    ]

    public static let byName: [String: MetricDefinition] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
}
