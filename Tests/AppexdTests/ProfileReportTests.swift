import AppexCgroups
import AppexHostClient
import AppexRegistry
import AppexTestSupport
import AppexWire
import Foundation
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `appex profile` and `appex report` through the real CLI, with the real probe extension
/// under the real sandbox (as root): the percentiles profile prints are the ones its launches
/// left in the history; report reads real history written by appexd across restarts, with
/// appexd stopped; both pages are well-formed and render in headless Chromium without a
/// console error.
@Suite(.serialized) struct ProfileReportTests {
    static let probeID = "dev.appex.tests.profile.probe"

    /// A private directory, state directory, cgroup parent and uid range for embedded runs
    /// (uids of its own, so the stale sweep at each profile run never meets another test's
    /// extensions).
    final class Workspace: @unchecked Sendable {
        let root: String
        let cgroupParent: String
        let uids = "320000-320999"
        var state: String { root + "/state" }

        init() throws {
            root = try ScratchDirectory.make("profile-test", mode: 0o755)
            cgroupParent = "appex-profile-tests-\(getpid())"
        }

        /// A bare bundle around the probe extension with CFBundleVersion `version`.
        func probeBundle(version: String) throws -> String {
            let dir = root + "/src-\(version)"
            let bundle = dir + "/Probe.appex"
            try BareBundle.write(
                at: bundle, executable: "probe", from: BuiltProducts.path("appex-probe-extension"),
                identifier: ProfileReportTests.probeID, version: version)
            return bundle
        }

        func profile(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
            try ProfileReportTests.appex(
                ["profile"] + args + [
                    "--state-dir", state, "--uid-range", uids,
                    "--cgroup-parent", cgroupParent,
                ])
        }

        // MARK: appexd on this workspace (the report test)

        var daemon: Process?
        var socket: String { root + "/appexd.sock" }
        /// appexd's own cgroup parent and uids, apart from the embedded runs' and from
        /// DaemonTests' (the suites run side by side).
        var daemonCgroupParent: String { cgroupParent + "-appexd" }

        /// The overlay keeps an idle instance until the test ends it, so a loaded machine's
        /// slow steps never add an idle exit and a relaunch to the history the test counts.
        func startDaemon() throws {
            try Data("admins: []\n".utf8).write(to: URL(fileURLWithPath: root + "/appexd.yaml"))
            try FileManager.default.createDirectory(atPath: root + "/policies/extension-points", withIntermediateDirectories: true)
            try Data("extensionPoints: [com.apple.widgetkit-extension]\ntitle: report tests, idle until ended\nidleTimeout: 10m\n".utf8)
                .write(to: URL(fileURLWithPath: root + "/policies/extension-points/widgetkit.yaml"))
            let p = Process()
            p.executableURL = URL(fileURLWithPath: BuiltProducts.path("appexd"))
            p.arguments = [
                "--state-dir", state, "--socket", socket, "--config", root + "/appexd.yaml",
                "--cgroup-parent", daemonCgroupParent, "--log-level", "warning", "--uid-range", "321000-321999",
                "--policy-dir", root + "/policies",
            ]
            try p.run()
            daemon = p
            try #require(HostClient.waitUntilServing(socketPath: socket), "appexd did not start answering")
        }

        /// SIGTERM; appexd's exit status.
        func stopDaemon() -> Int32 {
            guard let p = daemon else { return -1 }
            kill(p.processIdentifier, SIGTERM)
            p.waitUntilExit()
            daemon = nil
            return p.terminationStatus
        }

        /// `appex` with this workspace's appexd socket.
        func admin(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
            try ProfileReportTests.appex(args + ["--socket", socket])
        }

        func cleanUp() {
            if daemon != nil { _ = stopDaemon() }
            if let manager = try? CgroupManager.detect(parentName: daemonCgroupParent) {
                _ = try? manager.cleanupLeftovers()
                try? manager.removeParent()
            }
            if let manager = try? CgroupManager.detect(parentName: cgroupParent) {
                _ = try? manager.cleanupLeftovers()
                try? manager.removeParent()
            }
            try? ScratchDirectory.removeTree(root)
        }
    }

    static func appex(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
        let r = try CProgram.run(BuiltProducts.path("appex"), args)
        return (r.status, r.stdout, r.stderr)
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    /// The nearest-rank percentile, written here again so the test does not trust appex's.
    static func percentile(_ values: [UInt64], _ p: Double) -> Int {
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return Int(sorted[max(rank, 1) - 1])
    }

    /// `summary` (a phase of the JSON) holds exactly the percentiles of `values`.
    static func expectSummary(
        _ summary: Any?, of values: [UInt64], _ name: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let s = summary as? [String: Any] else {
            Issue.record("no phase \(name) in the JSON", sourceLocation: sourceLocation)
            return
        }
        #expect(s["count"] as? Int == values.count, "\(name) count", sourceLocation: sourceLocation)
        for (key, p) in [("p50", 50.0), ("p90", 90), ("p99", 99)] {
            #expect(s[key] as? Int == percentile(values, p), "\(name) \(key): \(s) vs \(values.sorted())", sourceLocation: sourceLocation)
        }
        #expect(s["max"] as? Int == Int(values.max() ?? 0), "\(name) max", sourceLocation: sourceLocation)
        #expect(s["min"] as? Int == Int(values.min() ?? 0), "\(name) min", sourceLocation: sourceLocation)
    }

    // MARK: profile

    @Test(.requiresRoot("launching needs root")) func profilePercentilesAreTheRecordedPhases() async throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        let bundle = try w.probeBundle(version: "1")

        // Cold: 12 launches, each recorded in the history as it happened.
        let cold = try w.profile([bundle, "-n", "12", "--json"])
        #expect(cold.status == 0, "\(cold.err)")
        let json = try Self.object(cold.out)
        #expect(json["launches"] as? Int == 12)
        #expect(json["mode"] as? String == "cold")
        #expect(json["deadlineMicros"] as? Int == 1_000_000, "the shipped default launch deadline, 1 s")
        #expect((json["failures"] as? [String: Any])?.isEmpty == true)
        let phases = try #require(json["phases"] as? [String: Any])

        let registry = try Registry(stateDirectory: w.state)
        let launches = try registry.launches(of: Self.probeID, limit: 1000).map(\.phaseMicroseconds)
        #expect(launches.count == 12)
        // Every phase the history recorded, percentile for percentile.
        let recorded = Set(launches.flatMap(\.keys))
        #expect(recorded.isSuperset(of: ["prepare", "clone", "sandbox", "exec", "spawn", "checkIn"]), "\(recorded)")
        for name in recorded {
            Self.expectSummary(phases[name], of: launches.compactMap { $0[name] }, name)
        }
        // The extension's start-up is the rest of check-in after spawn, launch by launch.
        Self.expectSummary(phases["startup"], of: launches.map { $0["checkIn"]! - $0["spawn"]! }, "startup")
        // The request phases match the request rows.
        let requests = try registry.requests(of: Self.probeID, limit: 1000)
        #expect(requests.count == 12 && requests.allSatisfy { $0.cold && $0.outcome == "completed" })
        Self.expectSummary(phases["total"], of: requests.map { UInt64($0.totalMicros) }, "total")
        #expect(phases["roundTrip"] != nil)
        // Each launch ended before the next: 12 idle exits.
        #expect(try registry.terminations(of: Self.probeID, limit: 1000).map(\.reason) == Array(repeating: "idle-exit", count: 12))
        let share = try #require(json["share"] as? [String: Any])
        let sandbox = try #require(share["sandbox"] as? Double), startup = try #require(share["startup"] as? Double)
        #expect(abs(sandbox + startup - 1) < 1e-9)

        // Warm, by identifier: one more launch, then 8 requests to that instance.
        let warm = try w.profile([Self.probeID, "--warm", "-n", "8", "--json"])
        #expect(warm.status == 0, "\(warm.err)")
        let warmJSON = try Self.object(warm.out)
        #expect(warmJSON["launches"] as? Int == 8 && warmJSON["mode"] as? String == "warm")
        let warmPhases = try #require(warmJSON["phases"] as? [String: Any])
        #expect(warmPhases["checkIn"] == nil && warmPhases["roundTrip"] != nil)
        let warmRequests = try registry.requests(of: Self.probeID, limit: 1000).filter { !$0.cold }
        Self.expectSummary(warmPhases["total"], of: warmRequests.map { UInt64($0.totalMicros) }, "warm total")
        // The second run's supervisor added to the first one's history.
        #expect(try registry.launches(of: Self.probeID, limit: 1000).count == 13)

        // For people: the table, the deadline, the split.
        let text = try w.profile([Self.probeID, "-n", "3"])
        #expect(text.status == 0, "\(text.err)")
        for expected in ["3 cold launches", "launch deadline 1 s", "checkIn", "startup", "of the deadline", "extension start-up"] {
            #expect(text.out.contains(expected), "missing \"\(expected)\" in \(text.out)")
        }
    }

    /// `--baseline`: an earlier run's JSON, phase by phase beside this run's; a file that is not
    /// one is refused naming the key, before anything is launched.
    @Test(.requiresRoot("launching needs root")) func profileComparesWithABaseline() async throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        let bundle = try w.probeBundle(version: "1")
        let first = try w.profile([bundle, "-n", "4", "--json"])
        #expect(first.status == 0, "\(first.err)")
        let saved = w.root + "/before.json"
        try Data(first.out.utf8).write(to: URL(fileURLWithPath: saved))
        let before = try #require(try Self.object(first.out)["phases"] as? [String: [String: Any]])

        let second = try w.profile([bundle, "-n", "4", "--json", "--baseline", saved, "--html", w.root + "/p.html"])
        #expect(second.status == 0, "\(second.err)")
        let now = try Self.object(second.out)
        let compared = try #require((now["baseline"] as? [String: Any])?["phases"] as? [String: [String: Any]])
        let checkIn = try #require(compared["checkIn"])
        #expect(checkIn["p50Before"] as? Int == before["checkIn"]?["p50"] as? Int)
        #expect(checkIn["p50"] as? Int == (now["phases"] as? [String: [String: Any]])?["checkIn"]?["p50"] as? Int)
        let ratio = try #require(checkIn["p50Ratio"] as? Double)
        #expect(abs(ratio - Double(checkIn["p50"] as! Int) / Double(max(checkIn["p50Before"] as! Int, 1))) < 1e-9)
        #expect(try String(contentsOfFile: w.root + "/p.html", encoding: .utf8).contains("Against the baseline"))
        let text = try w.profile([bundle, "-n", "2", "--baseline", saved])
        #expect(text.out.contains("Against the baseline \(saved)") && text.out.contains("now/before"), "\(text.out)")

        let bad = w.root + "/bad.json"
        try Data(#"{"bundleIdentifier": "x", "mode": "cold"}"#.utf8).write(to: URL(fileURLWithPath: bad))
        let refused = try w.profile([bundle, "-n", "2", "--baseline", bad])
        #expect(refused.status == 65 && refused.err.contains("phases is missing"), "\(refused)")
    }

    @Test(.requiresRoot("launching needs root")) func profileRefusesWhatItCannotLaunch() async throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        let missing = try w.profile(["dev.appex.tests.not-installed", "-n", "2"])
        #expect(missing.status == 66 && missing.err.contains("no extension dev.appex.tests.not-installed is installed"), "\(missing.err)")
        #expect(try w.profile(["x", "-n", "0"]).status == 64)
        let negative = try w.profile(["x", "-n", "-5"])
        #expect(negative.status == 64 && negative.err.contains("-n must be 1…100000, not -5"), "\(negative.err)")
        // Naming an extension in a state directory that holds none creates nothing there.
        let fresh = w.root + "/fresh-state"
        let nothing = try Self.appex(["profile", "dev.appex.tests.unknown", "-n", "1", "--state-dir", fresh])
        #expect(nothing.status == 66 && nothing.err.contains("no extension dev.appex.tests.unknown is installed"), "\(nothing.err)")
        #expect(!FileManager.default.fileExists(atPath: fresh), "profile created \(fresh)")
    }

    // MARK: report

    /// Real history from appexd: launches, a crash, a restart, a new version, shutdowns.
    /// The report reads it with appexd stopped, and again with appexd running.
    @Test(.requiresRoot("appexd needs root")) func reportShowsTheHistoryAppexdLeftAcrossRestarts() async throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        let bundle = try w.probeBundle(version: "1")
        let id = Self.probeID
        try w.startDaemon()
        #expect(try w.admin(["install", bundle]).status == 0)
        #expect(try w.admin(["enable", id]).status == 0)
        do {
            let host = try HostClient.connect(socketPath: w.socket, identifier: "tests.report")
            defer { host.close() }
            let cold = try await host.beginRequest(bundleIdentifier: id, items: [ExtensionItem(attributedContentText: "one")])
            #expect(cold.message.outcome == .completed && cold.message.cold)
            let warm = try await host.beginRequest(bundleIdentifier: id, items: [ExtensionItem(attributedContentText: "two")])
            #expect(warm.message.outcome == .completed && !warm.message.cold)
            let crash = try await host.beginRequest(bundleIdentifier: id, items: [ExtensionItem(userInfo: ["probe.action": .string("crash")])])
            #expect(crash.message.reason == .crashed)
            // Refused at admission (disabled): in the history too, as `refused`.
            #expect(try w.admin(["disable", id]).status == 0)
            await #expect(throws: HostClientError.self) { _ = try await host.beginRequest(bundleIdentifier: id) }
            #expect(try w.admin(["enable", id]).status == 0)
        }
        #expect(w.stopDaemon() == 0)

        // appexd is stopped: the report reads the database itself.
        let stopped = try Self.appex(["report", id, "--json", "--state-dir", w.state])
        #expect(stopped.status == 0, "\(stopped.err)")
        let first = try #require((try Self.object(stopped.out)["extensions"] as? [[String: Any]])?.first)
        #expect(first["bundleIdentifier"] as? String == id)
        #expect(first["launches"] as? Int == 1)
        #expect(first["deadlineMicros"] as? Int == 1_000_000)
        #expect(Self.reasons(first) == ["crashed": 1])
        #expect((first["requests"] as? [String: Any])?["outcomes"] as? [String: Int] == ["completed": 2, "failed": 1, "refused": 1])

        // A restart, version 2 installed over version 1, one more launch, a clean stop.
        try w.startDaemon()
        let reinstalled = try w.admin(["install", try w.probeBundle(version: "2")])
        #expect(reinstalled.status == 0, "\(reinstalled.err)")
        #expect(try w.admin(["request", id, "--text", "three"]).status == 0)
        // While appexd runs, the report reads beside it (appexd writes history rows in
        // batches, 250 ms after the first: asked until the launch is there).
        var seen: Int?
        for _ in 0..<100 where seen != 2 {
            let running = try Self.appex(["report", "--json", "--state-dir", w.state])
            #expect(running.status == 0, "\(running.err)")
            seen = (try Self.object(running.out)["extensions"] as? [[String: Any]])?.first?["launches"] as? Int
            if seen != 2 { usleep(100_000) }
        }
        #expect(seen == 2, "the running appexd's launch never showed")
        #expect(w.stopDaemon() == 0)

        let after = try Self.appex(["report", id, "--json", "--state-dir", w.state])
        #expect(after.status == 0, "\(after.err)")
        let ext = try #require((try Self.object(after.out)["extensions"] as? [[String: Any]])?.first)
        #expect(ext["launches"] as? Int == 2, "the first appexd's launch is still there")
        #expect(Self.reasons(ext) == ["crashed": 1, "supervisor-shutdown": 1])
        let versions = try #require(ext["byVersion"] as? [[String: Any]])
        #expect(versions.map { $0["version"] as? String } == ["1", "2"])
        #expect(versions.map { $0["count"] as? Int } == [1, 1])
        let overTime = try #require(ext["overTime"] as? [[String: Any]])
        #expect(overTime.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 2)
        let launches = try Registry(stateDirectory: w.state).launches(of: id).map { $0.phaseMicroseconds["checkIn"]! }
        Self.expectSummary((ext["phases"] as? [String: Any])?["checkIn"], of: launches, "checkIn")
        // The fleet summary: the crash is the one kill (the shutdown is graceful), the failed
        // request the one failure, and the check-in p99 measured against the 1 s deadline.
        let fleet = try #require(try Self.object(after.out)["fleet"] as? [String: Any])
        let killed = try #require((fleet["mostKilled"] as? [[String: Any]])?.first)
        #expect(killed["bundleIdentifier"] as? String == id && killed["count"] as? Int == 1 && killed["mostOften"] as? String == "crashed")
        let failed = try #require((fleet["mostFailed"] as? [[String: Any]])?.first)
        #expect(failed["count"] as? Int == 1 && failed["mostOften"] as? String == "crashed", "\(failed)")
        let nearest = try #require((fleet["nearestDeadline"] as? [[String: Any]])?.first)
        #expect(nearest["deadlineMicros"] as? Int == 1_000_000 && nearest["launches"] as? Int == 2)
        #expect(nearest["p99Micros"] as? Int == Int(launches.max()!), "p99 of two launches is the larger")
        let refused = try #require((fleet["mostRefused"] as? [[String: Any]])?.first)
        #expect(refused["count"] as? Int == 1 && refused["mostOften"] as? String == "disabled", "\(refused)")

        // For people.
        let text = try Self.appex(["report", id, "--state-dir", w.state])
        #expect(text.status == 0, "\(text.err)")
        #expect(text.out.hasPrefix("Fleet") || text.out.contains("\nFleet\n"), "the fleet summary comes first: \(text.out)")
        for expected in [
            "Nearest their launch deadline", "Most killed", "Most failed requests",
            "\(id): 2 launches", "Launch time (decision → check-in) by", "Launch time by version",
            "Terminations by reason", "crashed", "shutdown", "Requests: 5", "Most refused requests",
        ] {
            #expect(text.out.contains(expected), "missing \"\(expected)\" in \(text.out)")
        }
        let none = try Self.appex(["report", "--state-dir", w.root + "/no-such-state"])
        #expect(none.status == 66 && none.err.contains("no-such-state/registry.sqlite does not exist"), "\(none.err)")
        #expect(!FileManager.default.fileExists(atPath: w.root + "/no-such-state"), "report created the state directory")
        // An extension with no history is named, not shown as an empty report.
        let unknown = try Self.appex(["report", "dev.nope", "--state-dir", w.state])
        #expect(unknown.status == 66 && unknown.err.contains("dev.nope has no launches"), "\(unknown.err)")
    }

    static func reasons(_ ext: [String: Any]) -> [String: Int] {
        let rows = (ext["terminations"] as? [String: Any])?["byReason"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: rows.compactMap { r in (r["reason"] as? String).map { ($0, r["count"] as? Int ?? 0) } })
    }

    // MARK: the pages

    /// Both pages from real runs: well-formed, self-contained, one plot per phase (profile)
    /// and three per extension (report), each with the deadline; and, where Chromium is
    /// installed (CI installs it and sets APPEX_REQUIRE_CHROMIUM=1), rendered without a
    /// console message (SVG attribute errors, blocked fetches) and screenshotted.
    @Test(.requiresRoot("launching needs root")) func pagesAreSelfContainedAndRenderInChromium() async throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        let bundle = try w.probeBundle(version: "1")
        let profilePage = w.root + "/profile.html", reportPage = w.root + "/report.html"
        let profile = try w.profile([bundle, "-n", "10", "--json", "--html", profilePage])
        #expect(profile.status == 0, "\(profile.err)")
        let phaseCount = try #require((try Self.object(profile.out)["phases"] as? [String: Any])?.count)
        let report = try Self.appex(["report", "--state-dir", w.state, "--html", reportPage])
        #expect(report.status == 0, "\(report.err)")

        for (page, svgs) in [(profilePage, phaseCount + 1), (reportPage, 3)] {
            let html = try String(contentsOfFile: page, encoding: .utf8)
            #expect(Self.isWellFormedXML(html), "\(page) is not well-formed")
            #expect(Self.count("<svg", in: html) == svgs, "\(page): \(Self.count("<svg", in: html)) plots, expected \(svgs)")
            #expect(html.contains("Content-Security-Policy") && html.contains("default-src 'none'"))
            let outside = html.replacingOccurrences(of: "xmlns=\"http://www.w3.org/2000/svg\"", with: "")
            for external in ["<script", "<link", "<img", "src=", "url(", "http://", "https://"] {
                #expect(!outside.contains(external), "\(page) refers outside itself: \(external)")
            }
            #expect(!html.contains("NaN"), "\(page) has a non-finite number")
        }
        // The deadline in every latency plot: a line where it is near the data, an arrow at the
        // right edge where it is more than 4× the largest sample (the axis fits the data); the
        // report's two plots draw the line.
        let profileHTML = try String(contentsOfFile: profilePage, encoding: .utf8)
        let onScale = Self.count("<line class=\"deadline\"", in: profileHTML),
            offScale = Self.count("<path class=\"deadline off-scale\"", in: profileHTML)
        #expect(onScale + offScale == phaseCount)
        #expect(offScale >= 1, "handOff and clone take µs against a 1 s deadline: off scale")
        let reportHTML = try String(contentsOfFile: reportPage, encoding: .utf8)
        #expect(
            reportHTML.range(of: ">Fleet<")!.lowerBound < reportHTML.range(of: ">\(Self.probeID)<")!.lowerBound,
            "the fleet summary comes before the extensions")
        #expect(Self.count("<line class=\"deadline\"", in: try String(contentsOfFile: reportPage, encoding: .utf8)) == 2)

        guard let chromium = Chromium.executable else {
            #expect(
                ProcessInfo.processInfo.environment["APPEX_REQUIRE_CHROMIUM"] != "1",
                "APPEX_REQUIRE_CHROMIUM=1 but no chromium on PATH (apt-get install chromium)")
            return
        }
        for (page, svgs) in [(profilePage, phaseCount + 1), (reportPage, 3)] {
            let rendered = try Chromium.render(chromium, page: page, scratch: w.root)
            #expect(rendered.consoleMessages.isEmpty, "\(page): \(rendered.consoleMessages)")
            #expect(Self.count("<svg", in: rendered.dom) == svgs, "\(page): the rendered DOM has \(Self.count("<svg", in: rendered.dom)) plots")
            #expect(rendered.dom.contains("<rect class=\"bar\""), "\(page): no bars drawn")
            #expect(
                rendered.screenshot.count > 10_000 && rendered.screenshot.starts(with: [0x89, 0x50, 0x4E, 0x47]),
                "\(page): no screenshot")
            if let keep = ProcessInfo.processInfo.environment["APPEX_KEEP_SCREENSHOTS"] {
                try rendered.screenshot.write(to: URL(fileURLWithPath: keep + "/" + (page as NSString).lastPathComponent + ".png"))
            }
        }
    }

    static func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    static func isWellFormedXML(_ html: String) -> Bool {
        let parser = XMLParser(data: Data(html.utf8))
        // swift-corelibs' parse() can answer true after an error: the error is what counts.
        return parser.parse() && parser.parserError == nil
    }
}

/// Headless Chromium (Debian's `chromium`): the rendered DOM, the console, a screenshot.
enum Chromium {
    static var executable: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            for name in ["chromium", "chromium-browser"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
                return "\(dir)/\(name)"
            }
        }
        return nil
    }

    struct Rendered {
        var dom: String
        /// What the page said on its console: errors in SVG attributes, refused fetches, …
        var consoleMessages: [String]
        var screenshot: Data
    }

    static func render(_ chromium: String, page: String, scratch: String) throws -> Rendered {
        let profile = scratch + "/chromium-profile"
        let shot = scratch + "/shot.png"
        let common = [
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + profile,
            "--enable-logging=stderr", "--v=0", "--hide-scrollbars", "--window-size=1000,2400",
        ]
        let dumped = try run(chromium, common + ["--dump-dom", "file://" + page])
        let shotRun = try run(chromium, common + ["--screenshot=" + shot, "file://" + page])
        let console = (dumped.err + "\n" + shotRun.err).split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init)
        return Rendered(
            dom: dumped.out, consoleMessages: console,
            screenshot: (try? Data(contentsOf: URL(fileURLWithPath: shot))) ?? Data())
    }

    /// Runs Chromium, killed after 90 s should it hang.
    static func run(_ executable: String, _ args: [String]) throws -> (out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let watchdog = DispatchWorkItem { if p.isRunning { p.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 90, execute: watchdog)
        // Both pipes drained at once, so neither can fill and stall Chromium.
        let stderr = Drained()
        let reading = DispatchGroup()
        DispatchQueue.global().async(group: reading) { stderr.data = err.fileHandleForReading.readDataToEndOfFile() }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        reading.wait()
        watchdog.cancel()
        return (String(decoding: o, as: UTF8.self), String(decoding: stderr.data, as: UTF8.self))
    }

    /// Written by the reading thread before the group is left, read after the wait.
    final class Drained: @unchecked Sendable {
        var data = Data()
    }
}
