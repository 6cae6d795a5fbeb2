import AppexHostClient
import AppexPolicy
import AppexSupervisor
import AppexTestSupport
import AppexVersion
import AppexWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// appexd's `GET /metrics` after real launches, requests, denials, warnings and kills of the
/// probe extension, scraped over real HTTP and read with the strict parser: every count
/// equals what the host saw happen.
@Suite(.serialized) struct MetricsEndpointTests {
    static let point = MetricsDaemon.extensionPoint
    static let id = MetricsDaemon.probeIdentifier

    func withDaemon(
        metrics: String? = "127.0.0.1:0", configuration: String = "hosts: []\nadmins: []\n",
        logLevel: String = "warning", memory: [String] = ["  activeHardLimit: 32MiB"], extra: [String] = [],
        _ body: (MetricsDaemon) async throws -> Void
    ) async throws {
        try RequiresRoot.check("appexd needs root")
        let d = try MetricsDaemon(configuration: configuration, memory: memory)
        defer { d.cleanUp() }
        try d.start(metrics: metrics, logLevel: logLevel, extra: extra)
        try await body(d)
    }

    func scrape(_ address: String) throws -> Exposition {
        let r = try HTTPClient.request(address)
        try #require(r.status == 200, "\(r.status): \(r.body)")
        #expect(r.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        try Self.promtoolAgrees(r.body)
        return try Exposition.parse(r.body)
    }

    /// promtool's reading of the exposition, beside this target's parser.
    static func promtoolAgrees(_ text: String) throws {
        guard let r = try Promtool.run(["check", "metrics"], input: text) else { return }
        #expect(r.status == 0, "promtool check metrics: \(r.output)")
    }

    static func action(_ name: String, _ arg: String? = nil) -> [ExtensionItem] {
        var info: [String: UserInfoValue] = ["probe.action": .string(name)]
        if let arg { info["probe.arg"] = .string(arg) }
        return [ExtensionItem(userInfo: info)]
    }

    /// `appexd --prebuild-sandboxes`: the sandbox is built when the extension is enabled, so
    /// its first launch only enters it (no `view` phase), and the metric says who built it.
    @Test func aSandboxBuiltAheadLeavesTheViewOutOfTheFirstLaunch() async throws {
        try await withDaemon(extra: ["--prebuild-sandboxes"]) { d in
            let address = try #require(d.metricsAddress, "no metrics-address file: \(d.log)")
            let host = try HostClient.connect(socketPath: d.socket, identifier: "tests.metrics")
            defer { host.close() }
            _ = try await host.install(path: try d.writeProbeBundle())
            #expect(try scrape(address).sum("appex_sandbox_build_duration_seconds_count") == 0, "not while disabled")
            _ = try await host.enable(Self.id)
            var waited = 0
            while try scrape(address).sum("appex_sandbox_build_duration_seconds_count", ["trigger": "prebuild"]) < 1 && waited < 200 {
                try await Task.sleep(for: .milliseconds(50))
                waited += 1
            }
            let outcome = try await host.beginRequest(bundleIdentifier: Self.id, items: Self.action("echo"))
            #expect(outcome.outcome == .completed && outcome.cold, "\(outcome)")
            #expect(!outcome.phases.contains { $0.name == "view" }, "\(outcome.phases)")
            #expect(outcome.phases.contains { $0.name == "clone" } && outcome.phases.contains { $0.name == "checkIn" })
            let m = try scrape(address)
            #expect(m.sum("appex_sandbox_build_duration_seconds_count", ["trigger": "prebuild"]) == 1)
            #expect(m.sum("appex_sandbox_build_duration_seconds_count", ["trigger": "launch"]) == 0)
            #expect(m.sum("appex_launch_duration_seconds_count", ["phase": "view"]) == 0)
        }
    }

    @Test func countsMatchWhatHappened() async throws {
        try await withDaemon { d in
            let address = try #require(d.metricsAddress, "no metrics-address file: \(d.log)")
            let host = try HostClient.connect(socketPath: d.socket, identifier: "tests.metrics")
            defer { host.close() }
            _ = try await host.install(path: try d.writeProbeBundle())
            _ = try await host.enable(Self.id)

            // Before anything ran: the installed extension and appexd itself are there.
            let before = try scrape(address)
            #expect(before.sum("appex_extensions_installed", ["enabled": "true"]) == 1)
            #expect(before.sum("appex_supervisor_resident_memory_bytes") > Double(1 << 20))
            // Exported at zero before anything happened: each kill reason under the extension's
            // point, its memory warnings and its notify-denied call. (A counter that first
            // appears at 1 loses that event to rate() and increase().)
            for reason in Reason.killReasons {
                let zero = before.samples("appex_kills_total", ["reason": reason.rawValue, "extension_point": Self.point])
                #expect(!zero.isEmpty && zero.allSatisfy { $0.value == 0 && $0.labels["bundle_id"] == nil }, "\(reason): \(zero)")
            }
            #expect(before.samples("appex_memory_warnings_total", ["bundle_id": Self.id]).map(\.value) == [0])
            #expect(before.samples("appex_denied_syscalls_total", ["bundle_id": Self.id, "syscall": "reboot"]).map(\.value) == [0])
            try Self.expectStandardProcessMetrics(before)

            // Refused before admission: counted apart, by appexd's reason.
            for _ in 0..<2 {
                await #expect(throws: HostClientError.self) {
                    _ = try await host.beginRequest(bundleIdentifier: "dev.appex.tests.not-installed")
                }
            }
            _ = try await host.disable(Self.id)
            await #expect(throws: HostClientError.self) { _ = try await host.beginRequest(bundleIdentifier: Self.id) }
            _ = try await host.enable(Self.id)

            var outcomes: [ReceivedOutcome] = []
            func run(_ action: String, _ arg: String? = nil) async throws -> ReceivedOutcome {
                let outcome = try await host.beginRequest(bundleIdentifier: Self.id, items: Self.action(action, arg))
                outcomes.append(outcome)
                return outcome
            }
            #expect(try await run("echo").cold)
            #expect(try await run("echo").outcome == .completed)
            #expect(try await run("echo").outcome == .completed)
            // notify: appexd records it and answers EPERM.
            #expect(try await run("syscall", "reboot").items.first?.attributedContentText == "errno=1")
            #expect(try await run("cancel", "7").outcome == .cancelled)
            // 8 MiB, then 20 more: past 80 % of the 32 MiB limit, one memory warning.
            #expect(try await run("allocate", "8").outcome == .completed)
            #expect(try await run("allocate", "20").outcome == .completed)
            #expect(try await run("memory-warnings").items.first?.attributedContentText?.hasPrefix("memory-warnings=1 ") == true)
            let crashed = try await run("crash")
            #expect(crashed.outcome == .failed && crashed.reason == "crashed", "\(crashed.message)")
            // kill: SIGSYS, on a new instance.
            let violated = try await run("syscall", "swapon")
            #expect(violated.outcome == .failed && violated.reason == "seccomp-violation", "\(violated.message)")
            #expect(try await run("echo").cold)

            let m = try scrape(address)
            let byPoint = ["extension_point": Self.point]
            #expect(m.sum("appex_request_refusals_total", ["reason": "unknown-extension"]) == 2)
            #expect(m.sum("appex_request_refusals_total", ["reason": "disabled"]) == 1)
            #expect(m.sum("appex_request_refusals_total") == 3)
            #expect(m.sum("appex_build_info", ["version": AppexVersion.current]) == 1)

            // Every family appexd exports has the catalog's HELP and TYPE.
            for family in m.families.values where family.name.hasPrefix("appex_") || family.name.hasPrefix("process_") {
                let definition = try #require(MetricCatalog.byName[family.name], "\(family.name) is not in the catalog")
                #expect(family.type == definition.kind.rawValue, "\(family.name)")
                #expect(family.help == definition.help, "\(family.name)")
            }
            for name in [
                "appex_launch_duration_seconds", "appex_request_duration_seconds", "appex_requests_total",
                "appex_request_refusals_total",
                "appex_kills_total", "appex_memory_warnings_total", "appex_denied_syscalls_total",
                "appex_extension_footprint_bytes", "appex_extension_peak_memory_bytes",
                "appex_extension_memory_limit_bytes", "appex_extensions_live", "appex_extensions_installed",
                "appex_memory_pressure_level",
                "appex_supervisor_cpu_seconds_total", "appex_supervisor_resident_memory_bytes",
            ] {
                #expect(m.families[name] != nil, "\(name) missing")
            }

            // Requests by outcome, and their durations cold and warm.
            for (kind, label) in [(RequestOutcome.Kind.completed, "completed"), (.cancelled, "cancelled"), (.failed, "failed")] {
                let made = outcomes.filter { $0.outcome == kind }.count
                #expect(m.sum("appex_requests_total", byPoint.merging(["outcome": label]) { a, _ in a }) == Double(made), "\(label)")
            }
            #expect(m.sum("appex_requests_total", ["outcome": "failed", "reason": "crashed"]) == 1)
            #expect(m.sum("appex_requests_total", ["outcome": "failed", "reason": "seccomp-violation"]) == 1)
            let cold = outcomes.filter(\.cold).count
            #expect(cold == 3)
            #expect(m.sum("appex_request_duration_seconds_count", ["start": "cold"]) == Double(cold))
            #expect(m.sum("appex_request_duration_seconds_count", ["start": "warm"]) == Double(outcomes.count - cold))

            // Launch phases: one observation per launch and phase; firstRequest for each answer.
            let launches = outcomes.filter { $0.phases.contains { $0.name == "checkIn" } }.count
            #expect(launches == 3)
            for phase in ["prepare", "clone", "sandbox", "exec", "spawn", "checkIn"] {
                #expect(
                    m.sum("appex_launch_duration_seconds_count", ["phase": phase, "extension_point": Self.point, "start": "cold"])
                        == Double(launches), "\(phase)")
            }
            // Sandboxes: built by the launches that report a view, none ahead (the option is off).
            let views = outcomes.filter { $0.phases.contains { $0.name == "view" } }.count
            #expect(views >= 1)
            #expect(m.sum("appex_sandbox_build_duration_seconds_count", ["trigger": "launch"]) == Double(views))
            #expect(m.sum("appex_sandbox_build_duration_seconds_count", ["trigger": "prebuild"]) == 0)
            for (isCold, start) in [(true, "cold"), (false, "warm")] {
                let answered = outcomes.filter { $0.cold == isCold && $0.phases.contains { $0.name == "roundTrip" } }.count
                #expect(
                    m.sum("appex_launch_duration_seconds_count", ["phase": "firstRequest", "start": start]) == Double(answered),
                    "\(start)")
            }
            // The check-in times the host was told land in the histogram's sum (µs → s).
            let checkIns = outcomes.compactMap { $0.phases.first { $0.name == "checkIn" }?.microseconds }
            let checkInSum = m.sum("appex_launch_duration_seconds_sum", ["phase": "checkIn"])
            #expect(abs(checkInSum - Double(checkIns.reduce(0, +)) / 1e6) < 0.0001 * Double(checkIns.count))

            // Kills by reason, in a real band.
            #expect(m.sum("appex_kills_total", ["reason": "crashed"]) == 1)
            #expect(m.sum("appex_kills_total", ["reason": "seccomp-violation"]) == 1)
            for kill in m.samples("appex_kills_total") {
                #expect(JetsamBand(name: kill.labels["band"] ?? "") != nil, "\(kill)")
                #expect(kill.labels["extension_point"] == Self.point)
            }

            let mine = ["bundle_id": Self.id]
            #expect(m.sum("appex_denied_syscalls_total", mine.merging(["syscall": "reboot"]) { a, _ in a }) == 1)
            #expect(m.sum("appex_memory_warnings_total", mine) == 1)
            #expect(m.sum("appex_extension_memory_limit_bytes", mine.merging(["state": "active"]) { a, _ in a }) == Double(32 << 20))
            #expect(m.samples("appex_extension_memory_limit_bytes", mine.merging(["state": "inactive"]) { a, _ in a }).count == 1)
            #expect(m.sum("appex_extension_footprint_bytes", mine) > 0)
            #expect(m.sum("appex_extension_peak_memory_bytes", mine) >= Double(28 << 20))
            // One instance, idle now: aging towards its idle band (Docs/jetsam.md).
            #expect(m.sum("appex_extensions_live") == 1)
            #expect(m.sum("appex_extensions_live", ["band": "aging"]) + m.sum("appex_extensions_live", ["band": "idle"]) == 1)
            #expect(m.sum("appex_memory_pressure_level") == 0, "no budget, nothing short")
            #expect(m.sum("appex_supervisor_cpu_seconds_total") > 0)

            // A kill increments its reason, and nothing else moves with it.
            #expect(try await run("abort").reason == "crashed")
            let after = try scrape(address)
            #expect(after.sum("appex_kills_total", ["reason": "crashed"]) == 2)
            #expect(after.sum("appex_kills_total", ["reason": "seccomp-violation"]) == 1)
            #expect(after.sum("appex_extensions_live") == 0)
            #expect(after.sum("appex_extension_footprint_bytes", mine) == 0)

            // Only GET /metrics.
            #expect(try HTTPClient.request(address, path: "/").status == 404)
            #expect(try HTTPClient.request(address, method: "POST").status == 405)

            // Uninstalled: its gauges go; its counters stay (a counter that vanished would read as a reset).
            _ = try await host.uninstall(Self.id)
            let gone = try scrape(address)
            #expect(gone.samples("appex_extension_footprint_bytes", mine).isEmpty)
            #expect(gone.samples("appex_extension_memory_limit_bytes", mine).isEmpty)
            #expect(gone.sum("appex_extensions_installed") == 0)
            #expect(gone.sum("appex_kills_total", ["reason": "crashed"]) == 2)
        }
    }

    /// The standard `process_*` set, as client_golang's process collector exports it, read
    /// from appexd's own /proc/self.
    static func expectStandardProcessMetrics(_ m: Exposition) throws {
        for name in [
            "process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
            "process_start_time_seconds", "process_open_fds", "process_max_fds",
        ] {
            #expect(m.samples(name).count == 1, "\(name)")
        }
        #expect(m.sum("process_resident_memory_bytes") == m.sum("appex_supervisor_resident_memory_bytes"))
        #expect(m.sum("process_virtual_memory_bytes") > m.sum("process_resident_memory_bytes"))
        #expect(m.sum("process_cpu_seconds_total") > 0)
        let now = Date().timeIntervalSince1970
        let started = m.sum("process_start_time_seconds")
        #expect(started <= now + 1 && started > now - 600, "started \(started), now \(now)")
        // appexd holds its socket, lock, registry and listener at least; its limit is raised to the hard one.
        #expect(m.sum("process_open_fds") >= 4 && m.sum("process_open_fds") < m.sum("process_max_fds"))
    }

    /// `--kills-by-bundle`: kills counted per extension too, at zero from the start.
    @Test func killsByBundle() async throws {
        try await withDaemon(extra: ["--kills-by-bundle"]) { d in
            let address = try #require(d.metricsAddress, "no metrics-address file: \(d.log)")
            let host = try HostClient.connect(socketPath: d.socket, identifier: "tests.metrics")
            defer { host.close() }
            _ = try await host.install(path: try d.writeProbeBundle())
            _ = try await host.enable(Self.id)
            let mine = ["bundle_id": Self.id]
            let before = try scrape(address)
            #expect(before.sum("appex_kills_total", mine.merging(["reason": "crashed"]) { a, _ in a }) == 0)
            #expect(!before.samples("appex_kills_total", mine.merging(["reason": "crashed"]) { a, _ in a }).isEmpty)
            #expect(before.samples("appex_kills_total").allSatisfy { $0.labels["bundle_id"] == Self.id })
            let crashed = try await host.beginRequest(bundleIdentifier: Self.id, items: Self.action("crash"))
            #expect(crashed.reason == "crashed")
            let after = try scrape(address)
            #expect(after.sum("appex_kills_total", mine.merging(["reason": "crashed", "extension_point": Self.point]) { a, _ in a }) == 1)
        }
    }

    /// Scrapes until `condition` holds, up to `attempts` times 50 ms apart (the jetsam acts on
    /// kernel events, a moment after the request that caused them); the last scrape.
    func scrape(_ address: String, until condition: (Exposition) -> Bool, attempts: Int = 200) async throws -> Exposition {
        var m = try scrape(address)
        for _ in 0..<attempts where !condition(m) {
            try await Task.sleep(for: .milliseconds(50))
            m = try scrape(address)
        }
        return m
    }

    /// Under a 100 MiB budget: 80 MiB of footprint raises the pressure level to warning (and
    /// sends memory warnings), 92 MiB to critical, and the jetsam's kill is counted with
    /// reason `memory-pressure` and the victim's band.
    @Test func pressureLevelAndJetsamKills() async throws {
        let memory = [
            "  activeSoftLimit: 60MiB", "  activeHardLimit: 80MiB", "  inactiveSoftLimit: 60MiB",
            "  inactiveHardLimit: 80MiB", "  pageCacheAllowance: 4MiB",
        ]
        try await withDaemon(memory: memory, extra: ["--memory-budget", "100MiB"]) { d in
            let address = try #require(d.metricsAddress)
            let host = try HostClient.connect(socketPath: d.socket, identifier: "tests.metrics")
            defer { host.close() }
            let first = "dev.appex.tests.metrics.first", second = "dev.appex.tests.metrics.second"
            for id in [first, second] {
                _ = try await host.install(path: try d.writeProbeBundle(identifier: id))
                _ = try await host.enable(id)
            }
            func allocate(_ id: String, _ mib: Int) async throws -> ReceivedOutcome {
                try await host.beginRequest(bundleIdentifier: id, items: Self.action("allocate", String(mib)))
            }
            #expect(try await allocate(first, 40).outcome == .completed)
            let calm = try scrape(address)
            #expect(calm.sum("appex_memory_pressure_level") == 0)
            let warningsBefore = calm.sum("appex_memory_warnings_total")

            #expect(try await allocate(second, 40).outcome == .completed)
            let warned = try await scrape(address, until: { $0.sum("appex_memory_pressure_level") >= 1 })
            #expect(warned.sum("appex_memory_pressure_level") >= 1, "80 of 100 MiB")
            #expect(warned.sum("appex_memory_warnings_total") > warningsBefore, "pressure warnings are counted")

            _ = try await allocate(second, 12)
            let killed = try await scrape(address, until: { $0.sum("appex_kills_total", ["reason": "memory-pressure"]) >= 1 })
            // One series counted the kill; the others of the reason are the ones made at zero.
            let kills = killed.samples("appex_kills_total", ["reason": "memory-pressure"])
            #expect(kills.map(\.value).sorted() == [Double](repeating: 0, count: kills.count - 1) + [1], "\(kills)")
            #expect(kills.allSatisfy { JetsamBand(name: $0.labels["band"] ?? "") != nil }, "\(kills)")
            #expect(killed.sum("appex_kills_total") == 1, "the victim alone")
        }
    }

    /// `--metrics off`: no listener, no address file, and the log says so.
    @Test func metricsOff() async throws {
        try await withDaemon(metrics: "off", logLevel: "notice") { d in
            #expect(d.metricsAddress == nil)
            let log = d.log(containing: "metrics off")
            #expect(log.contains("metrics off"), "\(log)")
            #expect(d.stop() == 0)
        }
    }

    /// The configuration's `metrics` key, without the flag; the file goes when appexd stops.
    @Test func configurationKey() async throws {
        try await withDaemon(metrics: nil, configuration: "metrics: 127.0.0.1:0\n", logLevel: "notice") { d in
            let address = try #require(d.metricsAddress)
            #expect(d.log.contains("metrics: serving http://\(address)/metrics"), "\(d.log)")
            #expect(try HTTPClient.request(address).status == 200)
            #expect(d.stop() == 0)
            #expect(d.metricsAddress == nil)
        }
    }

    /// A malformed `--metrics` is refused before appexd does anything.
    @Test(arguments: ["9464", "127.0.0.1", "127.0.0.1:99999", "::1:9464", "[]:1", "on"])
    func badFlagIsRefused(_ value: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: BuiltProducts.path("appexd"))
        p.arguments = ["--metrics", value, "--state-dir", "/nonexistent-appex-test/state", "--config", "/nonexistent-appex-test/c.yaml"]
        let err = Pipe()
        p.standardError = err
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus != 0)
        #expect(text.contains("--metrics"), "\(text)")
    }
}
